// Randomized races between goal rounds and a person: human messages, /goal pause and resume (run the way
// chat and ACP run them), Ctrl-C and plugin input, each at a random point of a round (between tasks, during
// a model call, during a tool call, at a step's end, as a turn opens). Checks the driver invariants of
// DESIGN.md section 9 and the preemption rules: no model call of a round after a human message preempted
// it or a pause stopped it, the preempting message runs next, and a preempted round never blocks the goal.
// Reproduce a failure with GK_SEED=<printed seed> (and the path fast-check prints).
import { afterEach, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { Agent } from '@goalkeeper/agent-loop'
import type { ScriptResponse } from '@goalkeeper/model'
import type { SessionRecord, TurnOutcome, UserMessage } from '@goalkeeper/session'
import { interruptWork } from '@goalkeeper/goal-session'
import { executeGoalCommand, parseGoalCommand } from '@goalkeeper/tool-goal'
import { createHarness, type Harness } from '@goalkeeper/test-kit'
import { expectRoundsHeld, isGoal, watchRounds } from './round-watch.ts'

const SEED = Number(process.env.GK_SEED ?? 121212)
const RUNS = Number(process.env.GK_RUNS ?? 40)

type Point = 'macrotask' | 'model-call' | 'tool-call' | 'step-end' | 'turn-start'
type Command = 'human' | 'pause' | 'resume' | 'ctrl-c' | 'plugin'
interface Step { at: Point; command: Command }
/** A model reply: a tool call (the round goes on), text (it ends), complete, or a tool call after a pause of a few tasks. */
type Reply = 'tool' | 'text' | 'complete' | 'slow-tool'

const stepArb: fc.Arbitrary<Step> = fc.record({
  at: fc.constantFrom<Point>('macrotask', 'model-call', 'model-call', 'tool-call', 'step-end', 'turn-start'),
  command: fc.oneof(
    { weight: 4, arbitrary: fc.constant<Command>('human') },
    { weight: 2, arbitrary: fc.constantFrom<Command>('pause', 'resume') },
    { weight: 1, arbitrary: fc.constantFrom<Command>('ctrl-c', 'plugin') },
  ),
})
const replyArb: fc.Arbitrary<Reply> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom<Reply>('tool', 'slow-tool') },
  { weight: 2, arbitrary: fc.constant<Reply>('text') },
  { weight: 1, arbitrary: fc.constant<Reply>('complete') },
)

const coverage = { runs: 0, preempted: 0, pausedMidTurn: 0, outcomes: {} as Record<string, number> }

let current: Harness | undefined
afterEach(async () => {
  await current?.dispose()
  current = undefined
})

const isHuman = (m: UserMessage | undefined) => m?.source?.kind === 'human'
const stepsOf = (records: readonly SessionRecord[], turn: number) => records.filter((r) => r.type === 'step/start' && (r.data as { turn: number }).turn === turn).length

async function runScenario(steps: Step[], replies: Reply[]): Promise<void> {
  const h = await createHarness({ workspaceTools: false })
  current = h
  await h.load(await import('@goalkeeper/goal'), {})
  await h.load(await import('@goalkeeper/tool-goal'), {})
  await h.load(await import('@goalkeeper/goal-session'))
  const agent = await h.createAgent()
  const goals = h.root.goals
  const watch = watchRounds(h.root, () => agent)
  const violations = watch.violations

  // --- the model: one reply per call, text once the list is used up ---
  const queue = [...replies]
  const onModelCall: (() => void)[] = []
  h.scripted.push(...Array.from({ length: 300 }, () => async (): Promise<ScriptResponse> => {
    for (const act of onModelCall.splice(0)) act()
    const reply = queue.shift() ?? 'text'
    if (reply === 'slow-tool') await new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)))
    if (reply === 'tool' || reply === 'slow-tool') return { toolCalls: [{ name: 'get_goal', arguments: {} }] }
    const goal = goals.get(agent)
    if (reply === 'complete' && goal) return { toolCalls: [{ name: 'update_goal', arguments: { goal_id: goal.id, revision: goal.revision, action: 'complete' } }] }
    return { text: 'worked on it' }
  }))

  // --- what a round must not do after a human message or a pause reached it ---
  /** Goal round turns, with the step count they may not exceed once stopped, and why. */
  const limits = new Map<number, { steps: number; why: string; preemptedBy?: string }>()
  /** A round admitted but not open yet gets its limit as its turn opens (if it opens: a pause vetoes it). */
  let admittedLimit: { round: number; revision: number; why: string; preemptedBy?: string } | undefined
  const limit = (why: string, preemptedBy?: string) => {
    const round = h.root.goalDriver.current(agent)
    if (round?.state === 'admitted') return void (admittedLimit ??= { round: round.round, revision: round.revision, why, preemptedBy })
    // A round whose turn is closing (no open turn any more) has made its last model call anyway.
    if (round?.state !== 'running' || agent.turn === undefined || limits.has(agent.turn)) return
    limits.set(agent.turn, { steps: stepsOf(h.records(agent), agent.turn), why, preemptedBy })
  }
  // Ahead of the driver's listeners, which act on the round in the same events.
  h.root.on('agent/queued', (_a: Agent, message: UserMessage) => {
    if (isHuman(message)) limit(`human message ${message.id}`, message.id)
  }, { prepend: true })
  h.root.on('goal/changed', () => {
    if (goals.get(agent)?.phase === 'paused') limit('a pause')
  }, { prepend: true })
  h.root.on('agent/turn-start', (_a: Agent, turn: number, messages: UserMessage[]) => {
    const round = messages.find(isGoal)?.source as { round: number; revision: number } | undefined
    if (admittedLimit && round?.round === admittedLimit.round && round.revision === admittedLimit.revision) {
      limits.set(turn, { steps: 0, why: admittedLimit.why, preemptedBy: admittedLimit.preemptedBy })
    }
    admittedLimit = undefined
  })
  h.root.on('session/event', (_s, record: SessionRecord) => {
    if (record.type !== 'step/start') return
    const { turn } = record.data as { turn: number }
    const stopped = limits.get(turn)
    if (stopped && stepsOf(h.records(agent), turn) > stopped.steps) violations.push(`goal round turn ${turn} made a model call after ${stopped.why}`)
  })

  // --- commands, as a person and the hosts issue them ---
  const slash = (line: string) => executeGoalCommand(h.root, agent, parseGoalCommand(line)!)
  const execute = (command: Command) => {
    if (agent.disposed) return
    switch (command) {
      case 'human': return void agent.send({ content: 'a human message' })
      case 'pause': return void slash('/goal pause')
      case 'resume': return void slash('/goal resume')
      case 'ctrl-c': return void interruptWork(agent, goals)
      case 'plugin': return void agent.send({ content: 'a reminder', source: { kind: 'plugin', name: 'reminder' } })
    }
  }
  const quiet = () => {
    const goal = goals.get(agent)
    return agent.status === 'idle' && agent.queued.length === 0 && !(goal?.phase === 'active' && goal.activation === 'armed')
  }
  /** Calls `ready` once the run is quiet (checked a macrotask after each event); returns a disposer that abandons the wait. */
  const whenQuiet = (ready: () => void): (() => void) => {
    let done = false
    const stop = () => {
      done = true
      for (const d of disposers) d()
    }
    const check = () => {
      if (done || !quiet()) return
      stop()
      ready()
    }
    const disposers = ['agent/status', 'goal/changed', 'goal/activation', 'session/event'].map((name) => h.root.on(name as 'agent/status', () => void setImmediate(check)))
    setImmediate(check)
    return stop
  }
  /** Runs the command at its point, or at the next quiet moment if that point never comes. */
  const runAt = ({ at, command }: Step) => new Promise<void>((resolve) => {
    let done = false
    const disposers: (() => void)[] = []
    const fire = () => {
      if (done) return
      done = true
      for (const d of disposers) d()
      execute(command)
      resolve()
    }
    if (at === 'macrotask') return void setImmediate(fire)
    disposers.push(whenQuiet(fire))
    if (at === 'model-call') onModelCall.push(fire)
    if (at === 'tool-call') disposers.push(h.root.on('agent/tool-start', () => fire()))
    if (at === 'step-end') disposers.push(h.root.on('agent/step-end', () => fire()))
    if (at === 'turn-start') disposers.push(h.root.on('agent/turn-start', () => fire()))
  })

  goals.create(agent, { objective: 'keep the build green', maxGoalRounds: 4 })
  for (const step of steps) await runAt(step)
  await new Promise<void>((resolve) => whenQuiet(resolve))
  await agent.whenIdle()

  // --- checks ---
  const records = h.records(agent)
  const turns = new Map<number, UserMessage[]>()
  const ends = new Map<number, TurnOutcome>()
  let open: number | undefined
  for (const r of records) {
    if (r.type === 'turn/start') turns.set(open = (r.data as { turn: number }).turn, [])
    if (r.type === 'user/message' && open !== undefined) turns.get(open)!.push(r.data as UserMessage)
    if (r.type === 'turn/end') ends.set((r.data as { turn: number }).turn, (r.data as { outcome: TurnOutcome }).outcome)
  }
  const cancelled = new Set(records.filter((r) => r.type === 'input/cancelled').map((r) => (r.data as { messageId: string }).messageId))
  for (const [turn, outcome] of ends) {
    if (outcome.kind !== 'preempted') continue
    coverage.preempted++
    const stopped = limits.get(turn)
    if (!turns.get(turn)!.some(isGoal)) violations.push(`turn ${turn} was preempted but was no goal round`)
    if (!stopped?.preemptedBy) {
      violations.push(`turn ${turn} was preempted with no human message queued during it`)
      continue
    }
    // The preempting message runs next, unless a Ctrl-C removed it from the inbox first.
    if (!cancelled.has(stopped.preemptedBy) && !turns.get(turn + 1)?.some((m) => m.id === stopped.preemptedBy)) {
      violations.push(`the turn after preempted turn ${turn} did not run message ${stopped.preemptedBy}`)
    }
  }
  coverage.pausedMidTurn += [...limits.values()].filter((stopped) => stopped.why === 'a pause').length
  // A preempted round never blocks the goal: the driver's only block codes here would be these.
  const blocks = records.filter((r) => r.type === 'goal/change' && (r.data as { op: string }).op === 'block')
    .map((r) => (r.data as { goal: { blockedReason: { code: string } } }).goal.blockedReason.code)
  expect(blocks.filter((code) => code !== 'round-limit')).toEqual([])

  expectRoundsHeld(watch, h.errors(), goals.get(agent), records)
  coverage.runs++
  for (const outcome of ends.values()) coverage.outcomes[outcome.kind] = (coverage.outcomes[outcome.kind] ?? 0) + 1
  await h.dispose()
  current = undefined
}

describe('human input, /goal pause and goal rounds, raced', () => {
  it('no round makes a model call after a human message or a pause reached it, and the driver invariants hold', async () => {
    console.log(`goal preemption: seed ${SEED}, ${RUNS} runs (GK_SEED and GK_RUNS override)`)
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 10 }), fc.array(replyArb, { maxLength: 30 }), runScenario),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    )
    console.log(`goal preemption coverage: ${JSON.stringify(coverage)}`)
    // The generator must reach what the test is about.
    expect(coverage.preempted).toBeGreaterThan(0)
    expect(coverage.pausedMidTurn).toBeGreaterThan(0)
  }, 240_000)
})
