import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MODEL_ERROR_CODES, type ScriptStep } from '@goalkeeper/model'
import type { Agent } from '@goalkeeper/agent-loop'
import { createHarness, type Harness } from '@goalkeeper/test-kit'
import { testTools } from './helpers.ts'
import { checkLog } from './invariants.ts'

const SEED = Number(process.env.GK_FC_SEED ?? 20261129)
const RUNS = Number(process.env.GK_FC_RUNS ?? 60)

type Action =
  | { kind: 'send'; source: 'human' | 'plugin' }
  | { kind: 'steer' }
  | { kind: 'cancel' }
  | { kind: 'policy-cancel' }
  | { kind: 'preempt' }
  | { kind: 'yield'; ticks: number }

/** How `agent/prompt-submit` treats the run's batches. */
type Admission = 'all' | 'drop-plugin' | 'reject-second' | 'throw-second'

type Reply = 'text' | 'echo' | 'boom' | 'wait' | 'wait-then-echo' | 'two-calls' | 'max-tokens' | 'hang' | { error: string }

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('send' as const), source: fc.constantFrom('human' as const, 'plugin' as const) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'steer' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'cancel' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'policy-cancel' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'preempt' as const }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('yield' as const), ticks: fc.integer({ min: 1, max: 6 }) }) },
)

const reply: fc.Arbitrary<Reply> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom<Reply>('text', 'echo', 'two-calls') },
  { weight: 2, arbitrary: fc.constantFrom<Reply>('boom', 'wait', 'wait-then-echo', 'max-tokens', 'hang') },
  { weight: 1, arbitrary: fc.constantFrom(...MODEL_ERROR_CODES).map((code): Reply => ({ error: code })) },
)

describe('randomized interleavings', () => {
  let h: Harness
  let draining = false
  let current: Agent | undefined
  let admission: Admission = 'all'
  let batches = 0
  // During the final drain, a turn that would wait forever is stopped as soon as it waits; queued work still runs.
  const stopIfDraining = () => {
    if (draining) setImmediate(() => { if (current?.turn !== undefined) current.cancel('policy', { turn: current.turn }) })
  }

  beforeAll(async () => {
    h = await createHarness({ workspaceTools: false })
    await h.load(testTools)
    h.root.on('test/waiting', stopIfDraining)
    h.root.on('agent/prompt-submit', async (_agent, submission, next) => {
      const second = ++batches % 2 === 0
      if (admission === 'throw-second' && second) throw new Error('random admission failure')
      if (admission === 'reject-second' && second) return { kind: 'reject', reason: 'random' }
      if (admission === 'drop-plugin') submission.messages = submission.messages.filter((m) => m.source.kind !== 'plugin')
      return next()
    })
  })
  afterAll(() => h.dispose())

  const toStep = (r: Reply): ScriptStep => {
    if (typeof r === 'object') return { kind: 'error', code: r.error, message: `random ${r.error}` }
    switch (r) {
      case 'text': return { text: 'some answer' }
      case 'echo': return { text: 'calling', toolCalls: [{ name: 'echo', arguments: { text: 'hi' } }] }
      case 'two-calls': return { toolCalls: [{ name: 'echo', arguments: { text: 'a' } }, { name: 'boom' }] }
      case 'boom': return { toolCalls: [{ name: 'boom' }] }
      case 'wait': return { toolCalls: [{ name: 'wait' }] }
      case 'wait-then-echo': return { toolCalls: [{ name: 'wait' }, { name: 'echo', arguments: { text: 'late' } }] }
      case 'max-tokens': return { kind: 'max-tokens', text: 'cut' }
      case 'hang': return () => { stopIfDraining(); return { kind: 'hang', text: 'thinking' } }
    }
  }

  it(`keeps the log and the agent consistent (fast-check seed ${SEED}, ${RUNS} runs)`, async () => {
    console.log(`randomized agent-loop test: seed ${SEED}, runs ${RUNS} (set GK_FC_SEED / GK_FC_RUNS to change)`)
    const admissions = fc.constantFrom<Admission>('all', 'all', 'drop-plugin', 'reject-second', 'throw-second')
    await fc.assert(fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 12 }), fc.array(reply, { maxLength: 14 }), admissions, async (actions, replies, policy) => {
      draining = false
      admission = policy
      batches = 0
      h.scripted.reset(replies.map(toStep))
      const agent = current = await h.createAgent({ maxSteps: 4 })
      const statuses: string[] = []
      let turnEnds = 0
      const offStatus = h.root.on('agent/status', (a, status) => { if (a === agent) statuses.push(status) })
      const offTurnEnd = h.root.on('agent/turn-end', (a) => { if (a === agent) turnEnds++ })
      /** Steps each preempted turn had when the preempt was asked for: it may not start another. */
      const preempted = new Map<number, number>()
      const stepsOf = (turn: number) => h.records(agent).filter((r) => r.type === 'step/start' && (r.data as { turn: number }).turn === turn).length
      const preempt = (turn: number) => { if (agent.preempt(turn, 'random preempt')) preempted.set(turn, stepsOf(turn)) }
      const armed: (() => void)[] = []
      try {
        let n = 0
        for (const step of actions) {
          switch (step.kind) {
            case 'send': agent.send({ content: `m${++n}`, source: step.source === 'human' ? { kind: 'human' } : { kind: 'plugin', name: 'random' } }); break
            case 'steer': agent.steer({ content: `s${++n}` }); break
            case 'cancel': agent.cancel('user'); break
            case 'policy-cancel': if (agent.turn !== undefined) agent.cancel('policy', { turn: agent.turn }); break
            case 'preempt':
              // The open turn now, or else the next one as it opens.
              if (agent.turn !== undefined) preempt(agent.turn)
              else armed.push(h.root.once('agent/turn-start', (a, turn) => { if (a === agent) preempt(turn) }))
              break
            case 'yield': for (let i = 0; i < step.ticks; i++) await new Promise((resolve) => setImmediate(resolve))
          }
        }
        draining = true
        stopIfDraining()
        await agent.whenIdle()
        await h.root.sessions.flush(agent.session)

        const records = h.records(agent)
        expect(checkLog(records)).toEqual([])
        for (const [turn, steps] of preempted) expect(stepsOf(turn), `steps of preempted turn ${turn}`).toBeLessThanOrEqual(steps)
        expect(h.readFile(agent)).toEqual(records)
        expect(agent.status).toBe('idle')
        expect(agent.queued).toEqual([])
        expect(turnEnds).toBe(records.filter((r) => r.type === 'turn/end').length)
        expect(statuses.every((status, i) => status === (i % 2 ? 'idle' : 'running'))).toBe(true)
        expect(statuses.length % 2).toBe(0)
      } finally {
        offStatus()
        offTurnEnd()
        for (const off of armed) off()
        await agent.dispose()
      }
    }), { seed: SEED, numRuns: RUNS })
    // The only logged errors are the scripted admission failures.
    expect(h.errors().filter((line) => !line.includes('random admission failure'))).toEqual([])
  })
})
