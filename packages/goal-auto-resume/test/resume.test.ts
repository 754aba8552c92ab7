import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import { createHarness, untilGoalStops, type Harness } from '@goalkeeper/test-kit'
import type { AutoResumeNotice } from '../src/index.ts'

let h: Harness | undefined
afterEach(async () => {
  vi.useRealTimers()
  await h?.dispose()
  h = undefined
})

/** Only the plugin's own timers are faked: the agent loop and the session writer keep real time. */
const fakeClock = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })

async function setup(config: Record<string, unknown> = { enabled: true }): Promise<{ agent: Agent; notices: AutoResumeNotice[] }> {
  h = await createHarness()
  await h.load(await import('@goalkeeper/goal'), {})
  await h.load(await import('../src/index.ts'), config)
  await h.load(await import('@goalkeeper/goal-session'))
  const notices: AutoResumeNotice[] = []
  h.root.on('goal/auto-resume', (_agent, notice) => void notices.push(notice))
  return { agent: await h.createAgent(), notices }
}

const limited = (retryAfterMs?: number) => ({ kind: 'error' as const, code: 'RATE_LIMIT', message: 'slow down', ...(retryAfterMs === undefined ? {} : { retryAfterMs }) })
const ops = (agent: Agent) => h!.records(agent).filter((r) => r.type === 'goal/change').map((r) => (r.data as { op: string }).op)

describe('auto-resume after a usage limit', () => {
  it('waits for the announced reset plus the margin, then resumes; the goal goes on', async () => {
    fakeClock()
    const { agent, notices } = await setup({ enabled: true, marginMs: 1000 })
    h!.scripted.push(limited(60_000), { text: 'round two' })
    h!.root.goals.create(agent, { objective: 'Keep going', maxGoalRounds: 2 })
    const before = Date.now()
    expect(await untilGoalStops(h!.root, agent)).toMatchObject({ phase: 'blocked', blockedReason: { code: 'usage-limited' } })
    expect(notices).toEqual([{ kind: 'scheduled', goalId: expect.any(String), at: expect.any(Number), waitMs: 61_000, attempt: 1, maxTries: 2 }])
    expect((notices[0] as { at: number }).at - before).toBeGreaterThanOrEqual(61_000)
    expect(h!.root.goalAutoResume.pending(agent)).toMatchObject({ attempt: 1 })
    vi.advanceTimersByTime(60_999)
    expect(ops(agent)).toEqual(['create', 'block'])
    vi.advanceTimersByTime(1)
    expect(notices.at(-1)).toMatchObject({ kind: 'resumed', attempt: 1 })
    expect(await untilGoalStops(h!.root, agent)).toMatchObject({ phase: 'blocked', roundsStarted: 2, blockedReason: { code: 'round-limit' } })
    expect(ops(agent)).toEqual(['create', 'block', 'resume', 'block'])
  })

  it('resumes at most maxTries times, with the configured wait when none was announced', async () => {
    fakeClock()
    const { agent, notices } = await setup({ enabled: true, maxTries: 1, defaultWaitMs: 5000, marginMs: 0 })
    h!.scripted.push(limited(), limited())
    h!.root.goals.create(agent, { objective: 'Keep going' })
    await untilGoalStops(h!.root, agent)
    expect(notices[0]).toMatchObject({ kind: 'scheduled', waitMs: 5000 })
    vi.advanceTimersByTime(5000)
    expect(await untilGoalStops(h!.root, agent)).toMatchObject({ phase: 'blocked', roundsStarted: 2, blockedReason: { code: 'usage-limited' } })
    expect(notices.map((n) => n.kind)).toEqual(['scheduled', 'resumed', 'declined'])
    expect(notices.at(-1)).toMatchObject({ why: expect.stringContaining('maxTries 1') })
  })

  it('human input cancels the wait; the goal stays blocked', async () => {
    fakeClock()
    const { agent, notices } = await setup()
    h!.scripted.push(limited(1000), { text: 'hello' })
    h!.root.goals.create(agent, { objective: 'Keep going' })
    await untilGoalStops(h!.root, agent)
    agent.send({ content: 'I will take it from here' })
    await agent.whenIdle()
    vi.advanceTimersByTime(10 * 60_000)
    expect(notices.map((n) => n.kind)).toEqual(['scheduled', 'cancelled'])
    expect(notices[1]).toMatchObject({ why: 'human input' })
    expect(h!.root.goals.get(agent)).toMatchObject({ phase: 'blocked', blockedReason: { code: 'usage-limited' } })
  })

  it('a reset beyond the longest wait is not waited for; off by default unless an agent opts in', async () => {
    fakeClock()
    const { agent, notices } = await setup({ enabled: true })
    h!.scripted.push(limited(30 * 3_600_000))
    h!.root.goals.create(agent, { objective: 'Keep going' })
    await untilGoalStops(h!.root, agent)
    expect(notices).toEqual([{ kind: 'declined', goalId: expect.any(String), why: expect.stringContaining('beyond the longest wait') }])
    await h!.dispose()

    const off = await setup({})
    h!.scripted.push(limited(1000), limited(1000))
    h!.root.goals.create(off.agent, { objective: 'Not armed' })
    await untilGoalStops(h!.root, off.agent)
    expect(off.notices).toEqual([])
    h!.root.goalAutoResume.enable(off.agent)
    h!.root.goals.resume(off.agent, h!.root.goals.get(off.agent)!)
    await untilGoalStops(h!.root, off.agent)
    expect(off.notices.map((n) => n.kind)).toEqual(['scheduled'])
  })

  it('a restart leaves the goal blocked: the wait lives in the process only', async () => {
    fakeClock()
    const { agent, notices } = await setup()
    h!.scripted.push(limited(1000))
    h!.root.goals.create(agent, { objective: 'Keep going' })
    await untilGoalStops(h!.root, agent)
    await agent.dispose()
    await h!.root.sessions.close(agent.session)
    expect(notices.map((n) => n.kind)).toEqual(['scheduled', 'cancelled'])
    const reopened = await h!.root.agents.resume(agent.id)
    vi.advanceTimersByTime(60_000)
    expect(h!.root.goals.get(reopened)).toMatchObject({ phase: 'blocked', activation: 'disarmed', blockedReason: { code: 'usage-limited' } })
    expect(h!.root.goalAutoResume.pending(reopened)).toBeUndefined()
  })
})
