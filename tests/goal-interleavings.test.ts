// Randomized interleavings of one agent's goal life: goal mutations, human input, cancels, scripted
// model outcomes, flush failures, driver unload/reload and session reopen, each applied at a random
// point (a macrotask boundary, or synchronously inside an event listener as a plugin would).
// Reproduce a failure with GK_SEED=<printed seed> (and the path fast-check prints).
import { afterEach, describe, expect, it, vi } from 'vitest'
import fc from 'fast-check'
import type { Fiber } from 'cordis'
import type { Agent, PromptDecision, Submission } from '@goalkeeper/agent-loop'
import type { ScriptResponse } from '@goalkeeper/model'
import type { UserMessage } from '@goalkeeper/session'
import { foldGoal, type GoalState } from '@goalkeeper/goal'
import { createHarness, type Harness } from '@goalkeeper/test-kit'
import { expectRoundsHeld, isGoal, watchRounds } from './round-watch.ts'

const SEED = Number(process.env.GK_SEED ?? 424242)
const RUNS = Number(process.env.GK_RUNS ?? 60)

type Point = 'macrotask' | 'on-goal-queued' | 'on-turn-start' | 'on-admission'
type Command =
  | { kind: 'create'; max: number }
  | { kind: 'edit'; max?: number }
  | { kind: 'pause' | 'resume' | 'clear' | 'disarm' | 'human' | 'forged' | 'cancel' | 'fail-flush' | 'toggle-driver' | 'reopen' }
interface Step { at: Point; command: Command }
const ERROR_CODES = ['RATE_LIMIT', 'QUOTA', 'AUTH', 'SERVER', 'TRANSPORT', 'BAD_REQUEST', 'CONTEXT_OVERFLOW', 'INTERNAL'] as const
type Outcome = 'text' | 'get-goal' | 'complete' | 'hang' | 'max-tokens' | (typeof ERROR_CODES)[number]

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 4 }).map((max) => ({ kind: 'create' as const, max })) },
  { weight: 1, arbitrary: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }).map((max) => ({ kind: 'edit' as const, max })) },
  { weight: 4, arbitrary: fc.constantFrom('pause', 'resume', 'human', 'cancel').map((kind) => ({ kind }) as Command) },
  { weight: 2, arbitrary: fc.constantFrom('clear', 'disarm', 'forged', 'fail-flush', 'toggle-driver', 'reopen').map((kind) => ({ kind }) as Command) },
)
const stepArb: fc.Arbitrary<Step> = fc.record({
  at: fc.constantFrom<Point>('macrotask', 'macrotask', 'on-goal-queued', 'on-turn-start', 'on-admission'),
  command: commandArb,
})
const outcomeArb: fc.Arbitrary<Outcome> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Outcome>('text') },
  { weight: 2, arbitrary: fc.constantFrom<Outcome>('get-goal', 'complete', 'hang', 'max-tokens') },
  { weight: 2, arbitrary: fc.constantFrom<Outcome>(...ERROR_CODES) },
)

/** What the runs exercised, printed at the end so a weak generator shows. */
const coverage = { runs: 0, rounds: 0, dropped: 0, outcomes: {} as Record<string, number>, blocks: {} as Record<string, number> }
const bump = (table: Record<string, number>, key: string) => void (table[key] = (table[key] ?? 0) + 1)

let current: Harness | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  await current?.dispose()
  current = undefined
})


async function runScenario(steps: Step[], outcomes: Outcome[]): Promise<void> {
  const h = await createHarness({ workspaceTools: false })
  current = h
  await h.load(await import('@goalkeeper/goal'), {})
  await h.load(await import('@goalkeeper/tool-goal'), {})
  const driverModule = await import('@goalkeeper/goal-session')
  let driver: Fiber | undefined = await h.load(driverModule)
  let agent = await h.createAgent()
  const id = agent.id
  const goals = h.root.goals

  // --- scripted model: one outcome per request, plain text once the list is used up ---
  let hanging = false
  const queue = [...outcomes]
  const respond = (): ScriptResponse => {
    const outcome = queue.shift() ?? 'text'
    switch (outcome) {
      case 'text': return { text: 'worked on it' }
      case 'get-goal': return { toolCalls: [{ name: 'get_goal', arguments: {} }] }
      case 'complete': {
        const goal = goals.get(agent)
        return goal ? { toolCalls: [{ name: 'update_goal', arguments: { goal_id: goal.id, revision: goal.revision, action: 'complete' } }] } : { text: 'no goal' }
      }
      case 'hang':
        hanging = true
        return { kind: 'hang' }
      case 'max-tokens': return { kind: 'max-tokens', text: 'cut' }
      default: return { kind: 'error', code: outcome, message: `scripted ${outcome}` }
    }
  }
  h.scripted.push(...Array.from({ length: 400 }, () => respond))

  // --- flush failure injection: the next flush (checkpoint or post-turn) rejects once ---
  let failNextFlush = false
  const realFlush = h.root.sessions.flush.bind(h.root.sessions)
  vi.spyOn(h.root.sessions, 'flush').mockImplementation(async (session) => {
    if (failNextFlush) {
      failNextFlush = false
      throw new Error('injected flush failure')
    }
    return realFlush(session)
  })

  // --- instruments ---
  let sendingForged = false
  const watch = watchRounds(h.root, () => agent, () => sendingForged)
  h.root.on('agent/turn-end', () => {
    hanging = false
  })

  // --- quiescence: idle, nothing queued, and no loaded driver holding an active armed goal ---
  const runnable = () => {
    try {
      const goal = goals.get(agent)
      return !!driver && goal?.phase === 'active' && goal.activation === 'armed'
    } catch {
      return false
    }
  }
  const quiet = () => agent.status === 'idle' && agent.turn === undefined && agent.queued.length === 0 && !runnable()
  /** Calls `ready` once the run is quiet or a model call hangs; returns a disposer that abandons the wait. */
  const whenSettledOrHung = (ready: () => void): (() => void) => {
    let done = false
    const stop = () => {
      done = true
      for (const d of disposers) d()
    }
    // Checked a macrotask later, so every synchronous reaction to the event has happened.
    const check = () => {
      if (done || (!quiet() && !hanging)) return
      stop()
      ready()
    }
    const disposers = ['session/event', 'agent/status', 'goal/activation', 'agent/queued'].map((name) => h.root.on(name as 'agent/status', () => void setImmediate(check)))
    setImmediate(check)
    return stop
  }
  const settledOrHung = () => new Promise<void>((resolve) => whenSettledOrHung(resolve))

  // --- commands ---
  let edits = 0
  const live = () => {
    try {
      return goals.get(agent)
    } catch {
      return undefined
    }
  }
  const attempt = (fn: () => unknown) => {
    try {
      fn()
    } catch (error) {
      // Refused transitions are expected in random sequences; anything else is a failure.
      const code = (error as { code?: string }).code ?? ''
      if (!code.startsWith('GOAL_') || code === 'GOAL_CORRUPT_LOG') throw error
    }
  }
  const execute = async (command: Command): Promise<void> => {
    const goal = live()
    switch (command.kind) {
      case 'create': return attempt(() => goals.create(agent, { objective: 'keep the build green', maxGoalRounds: command.max }))
      case 'edit': return attempt(() => goal && goals.edit(agent, goal, { objective: `revised objective ${++edits}`, ...(command.max ? { maxGoalRounds: command.max } : {}) }))
      case 'pause': return attempt(() => goal && goals.pause(agent, goal))
      case 'resume': return attempt(() => goal && goals.resume(agent, goal))
      case 'clear': return attempt(() => goal && goals.clear(agent, goal))
      case 'disarm': return attempt(() => goals.disarm(agent))
      case 'human':
        agent.send({ content: 'a human message' })
        return
      case 'forged':
        if (!driver || !goal) return
        sendingForged = true
        try {
          agent.send({ content: 'forged round', source: { kind: 'goal', goalId: goal.id, revision: goal.revision, round: goal.roundsStarted + 1 } })
        } finally {
          sendingForged = false
        }
        return
      case 'cancel':
        agent.cancel('user')
        return
      case 'fail-flush':
        failNextFlush = true
        return
      case 'toggle-driver':
        if (driver) {
          const fiber = driver
          driver = undefined
          await fiber.dispose()
        } else {
          driver = await h.load(driverModule)
        }
        return
      case 'reopen':
        await agent.dispose()
        agent = await h.root.agents.resume(id, { model: 'scripted' })
        // Restored human input waits for the next batch; a new message starts it, as `resume` with a prompt would.
        if (agent.queued.length) agent.send({ content: 'continue' })
        return
    }
  }

  /** Runs the command at its point; a point that never comes falls back to the next quiet or hung moment. */
  const runAt = (at: Point, command: Command): Promise<void> => new Promise((resolve, reject) => {
    let done = false
    const disposers: (() => void)[] = []
    const fire = () => {
      if (done) return
      done = true
      for (const d of disposers) d()
      execute(command).then(resolve, reject)
    }
    if (at === 'macrotask') return void setImmediate(fire)
    disposers.push(whenSettledOrHung(fire))
    if (at === 'on-goal-queued') disposers.push(h.root.on('agent/queued', (_a: Agent, m: UserMessage) => void (isGoal(m) && !sendingForged && fire())))
    if (at === 'on-turn-start') disposers.push(h.root.on('agent/turn-start', () => fire()))
    if (at === 'on-admission') {
      disposers.push(h.root.on('agent/prompt-submit', async (_a: Agent, submission: Submission, next: () => Promise<PromptDecision>) => {
        if (!done && submission.messages.some(isGoal)) fire()
        return next()
      }))
    }
  })

  // Every run starts with a goal so most of them exercise rounds; later creates test the refusals.
  for (const step of [{ at: 'macrotask' as const, command: { kind: 'create' as const, max: 3 } }, ...steps]) await runAt(step.at, step.command)
  // Wind down: cancel whatever hangs until nothing can run any more.
  for (let i = 0; i < 20; i++) {
    await settledOrHung()
    if (quiet() && !hanging) break
    agent.cancel('user')
  }

  failNextFlush = false
  expect(quiet()).toBe(true)
  expect(agent.status).toBe('idle')
  const goal = goals.get(agent)
  const records = h.records(agent)
  expectRoundsHeld(watch, h.errors(), goal, records)
  coverage.runs++
  for (const r of records) {
    if (r.type === 'user/message' && isGoal(r.data as UserMessage)) coverage.rounds++
    if (r.type === 'input/rejected') coverage.dropped++
    if (r.type === 'turn/end') bump(coverage.outcomes, (r.data as { outcome: { kind: string } }).outcome.kind)
    if (r.type === 'goal/change') {
      const reason = (r.data as { goal?: GoalState | null }).goal?.blockedReason
      if (reason) bump(coverage.blocks, reason.code)
    }
  }
  await realFlush(agent.session)
  const { activation: _activation, ...persisted } = goal ?? ({} as GoalState)
  expect(foldGoal(h.readFile(agent)) ?? null).toEqual(goal ? persisted : null)
  // Activation is process-local: no record, reason or tool result may speak of it.
  expect(JSON.stringify(h.readFile(agent))).not.toMatch(/activation|armed/i)
  await h.dispose()
  current = undefined
}

describe('goal round interleavings', () => {
  it('keeps the driver invariants under random sequences', async () => {
    console.log(`goal interleavings: seed ${SEED}, ${RUNS} runs (GK_SEED and GK_RUNS override)`)
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 16 }), fc.array(outcomeArb, { maxLength: 24 }), async (steps, outcomes) => {
        vi.restoreAllMocks()
        await runScenario(steps, outcomes)
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    )
    console.log(`goal interleavings coverage: ${JSON.stringify(coverage)}`)
  }, 240_000)
})
