import { afterEach, describe, expect, it } from 'vitest'
import { readFile } from 'node:fs/promises'
import { dispatchIsolated } from '@goalkeeper/kit'
import { hangingCall, untilGoalStops } from '@goalkeeper/test-kit'
import { completeStep, deliveries, dropSecret, makeSecret, SECRET_ENV, setup, type Setup } from './helpers.ts'
import { startReceiver, type Receiver } from './receiver.ts'

let s: Setup | undefined
const receivers: Receiver[] = []
afterEach(async () => {
  await s?.h.dispose()
  s = undefined
  for (const receiver of receivers.splice(0)) await receiver.close()
  dropSecret()
})

async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const started = await startReceiver(...args)
  receivers.push(started)
  return started
}

describe('webhooks through the real loop', () => {
  it('a completed goal is delivered once, signed, after a 500 and a timeout, with the same webhook-id each time; the session logs every attempt and holds no secret', async () => {
    const secret = makeSecret()
    const hook = await receiver(secret, [500, 'hang', 200])
    s = await setup({ endpoints: [{ url: `${hook.url}?token=query-secret-2c9f1`, secretEnv: SECRET_ENV, timeoutMs: 300, retries: 3 }] })
    const { h, agent } = s
    h.scripted.push({ text: 'first pass' }, completeStep(h, agent), { text: 'Summary: done.' })
    h.root.goals.create(agent, { objective: 'Make the tests pass', maxGoalRounds: 5 })
    expect(await untilGoalStops(h.root, agent)).toMatchObject({ phase: 'complete' })
    await h.root.notifier.idle()

    expect(hook.received).toHaveLength(3)
    expect(new Set(hook.received.map((r) => r.id)).size).toBe(1)
    expect(hook.received.every((r) => r.verified)).toBe(true)
    expect(hook.received.every((r) => r.raw === hook.received[0]!.raw)).toBe(true)
    const { body } = hook.received[0]!
    expect(body).toMatchObject({ type: 'goal.completed', data: { session: agent.id, workspace: h.workspace, goal: { phase: 'complete', objective: 'Make the tests pass', roundsStarted: 2 } } })
    expect(Math.abs(hook.received[0]!.timestamp - Date.now() / 1000)).toBeLessThan(60)

    const log = deliveries(h, agent)
    expect(log.map((d) => [d.attempt, d.status, d.outcome])).toEqual([[1, 500, 'retry'], [2, null, 'retry'], [3, 200, 'delivered']])
    expect(log.every((d) => d.id === hook.received[0]!.id && d.type === 'goal.completed' && d.url === hook.url)).toBe(true)
    expect(log[1]!.error).toBe('no response within 300 ms')

    await h.root.sessions.flush(agent.session)
    const file = await readFile(agent.session.file, 'utf8')
    expect(file).toContain('notify/delivery')
    for (const leak of [secret, secret.slice('whsec_'.length), 'query-secret-2c9f1']) expect(file).not.toContain(leak)
  })

  it('a goal that blocks and then pauses delivers one event each, with distinct ids; an endpoint that asks only for pauses gets only that one, unsigned', async () => {
    const secret = makeSecret()
    const all = await receiver(secret)
    const pauses = await receiver(undefined)
    s = await setup({ endpoints: [{ url: all.url, secretEnv: SECRET_ENV }, { url: pauses.url, events: ['goal.paused'] }] })
    const { h, agent } = s
    const hang = hangingCall()
    h.scripted.push({ text: 'round one' }, hang.step)
    const goal = h.root.goals.create(agent, { objective: 'Tidy the repo', maxGoalRounds: 1 })
    // One round, then the cap: the driver blocks the goal round-limit.
    expect(await untilGoalStops(h.root, agent)).toMatchObject({ phase: 'blocked', blockedReason: { code: 'round-limit' } })
    const raised = h.root.goals.edit(agent, { id: goal.id, revision: h.root.goals.get(agent)!.revision }, { maxGoalRounds: 2 })
    h.root.goals.resume(agent, { id: goal.id, revision: raised.revision })
    await hang.reached
    // Ctrl-C's meaning: the round is cancelled and its goal paused.
    agent.cancel('user')
    expect(await untilGoalStops(h.root, agent)).toMatchObject({ phase: 'paused' })
    await h.root.notifier.idle()

    expect(all.received.map((r) => r.body.type)).toEqual(['goal.blocked', 'goal.paused'])
    expect(all.received[0]!.body.data.goal.blockedReason).toMatchObject({ code: 'round-limit' })
    expect(all.received.every((r) => r.verified)).toBe(true)
    expect(all.received[0]!.id).not.toBe(all.received[1]!.id)
    expect(pauses.received.map((r) => [r.body.type, r.signature])).toEqual([['goal.paused', undefined]])
    expect(pauses.received[0]!.id).toBe(all.received[1]!.id)
    expect(deliveries(h, agent).map((d) => [d.type, d.outcome])).toEqual([['goal.blocked', 'delivered'], ['goal.paused', 'delivered'], ['goal.paused', 'delivered']])
  })

  it('a goal stopped at its budget is delivered as goal.budget_reached, not also as goal.blocked', async () => {
    const hook = await receiver(undefined)
    s = await setup({ endpoints: [{ url: hook.url }] }, { before: [[await import('@goalkeeper/goal-budget')]] })
    const { h, agent } = s
    h.scripted.push({ text: 'spent it all', usage: { inputTokens: 900, outputTokens: 200 } }, { text: 'never asked' })
    h.root.goals.create(agent, { objective: 'Refactor', budgets: { tokens: 1000 } })
    expect(await untilGoalStops(h.root, agent)).toMatchObject({ phase: 'blocked', blockedReason: { code: 'budget-limited' } })
    await h.root.notifier.idle()
    expect(hook.received.map((r) => r.body.type)).toEqual(['goal.budget_reached'])
    expect(hook.received[0]!.body.data.goal).toMatchObject({ budgets: { tokens: 1000 }, spent: { tokens: 1100 } })
  })

  it('a tool call waiting for a person is delivered as approval.waiting while it waits', async () => {
    const hook = await receiver(undefined)
    s = await setup({ endpoints: [{ url: hook.url }] }, { before: [[await import('@goalkeeper/permissions'), { mode: 'read-only' }]] })
    const { h, agent } = s
    // The person answers only once the webhook arrived: the call waited for them the whole time.
    h.root.on('permissions/ask', () => hook.until(1).then(() => ({ kind: 'deny' as const, by: 'test', reason: 'not now' })))
    h.scripted.push({ toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }] }, { text: 'ok, not written' })
    agent.send({ content: 'write a.txt' })
    await agent.whenIdle()
    await h.root.notifier.idle()
    expect(hook.received.map((r) => r.body)).toMatchObject([{ type: 'approval.waiting', data: { session: agent.id, tool: 'write_file', mode: 'read-only', turn: 1 } }])
    expect(hook.received[0]!.body.data.why).toMatch(/write_file/)
    expect(h.records(agent).filter((r) => r.type === 'tool/result').map((r) => (r.data as { denied?: { reason: string } }).denied?.reason)).toEqual(['not now'])
    expect(deliveries(h, agent).map((d) => d.outcome)).toEqual(['delivered'])
  })

  it('unload while a delivery hangs is bounded by drainMs: the attempt is abandoned, recorded and said', async () => {
    const hook = await receiver(undefined, ['hang'])
    s = await setup({ endpoints: [{ url: hook.url, timeoutMs: 600_000 }], drainMs: 50 })
    const { h, agent, notifier } = s
    const goal = h.root.goals.create(agent, { objective: 'Ship it' })
    h.root.goals.complete(agent, { id: goal.id, revision: goal.revision })
    await hook.until(1)
    await notifier.dispose()
    expect(deliveries(h, agent).map((d) => [d.attempt, d.status, d.outcome])).toEqual([[1, null, 'abandoned']])
    expect(h.logs.some((line) => line.level === 'warn' && /gave up on 1 webhook deliveries still under way after 50 ms/.test(line.text))).toBe(true)
  })
})

describe('what is retried', () => {
  const lost = { job: 'job-1', sessionId: 'session-1', worker: 'host:1', attempt: 0 }

  it('a worker that lost its job is delivered as fleet.job_lost', async () => {
    const hook = await receiver(undefined)
    s = await setup({ endpoints: [{ url: hook.url }] })
    dispatchIsolated(s.h.root, 'fleet/job-lost', lost)
    await s.h.root.notifier.idle()
    expect(hook.received.map((r) => r.body)).toMatchObject([{ type: 'fleet.job_lost', data: { job: 'job-1', session: 'session-1', worker: 'host:1', attempt: 0 } }])
  })

  it('a 4xx is not retried: one attempt, failed, and a warning', async () => {
    const hook = await receiver(undefined, [400, 200])
    s = await setup({ endpoints: [{ url: hook.url }] })
    dispatchIsolated(s.h.root, 'fleet/job-lost', lost)
    await s.h.root.notifier.idle()
    expect(hook.received).toHaveLength(1)
    expect(s.h.logs.some((line) => line.level === 'warn' && /fleet\.job_lost to .* failed after 1 attempt: HTTP 400/.test(line.text))).toBe(true)
  })

  it('a 429 is retried after its Retry-After; retries run out after 1 + retries attempts', async () => {
    const busy = await receiver(undefined, [{ status: 429, headers: { 'retry-after': '0' } }, 200])
    const down = await receiver(undefined, [503])
    s = await setup({ endpoints: [{ url: busy.url }, { url: down.url, retries: 2 }] })
    dispatchIsolated(s.h.root, 'fleet/job-lost', lost)
    await s.h.root.notifier.idle()
    expect(busy.received).toHaveLength(2)
    expect(down.received).toHaveLength(3)
    expect(new Set([...busy.received, ...down.received].map((r) => r.id)).size).toBe(1)
    expect(s.h.logs.some((line) => /failed after 3 attempts: HTTP 503/.test(line.text))).toBe(true)
  })

  it('an endpoint whose secret variable is not set fails the load, naming the variable and not a secret', async () => {
    const hook = await receiver(undefined)
    await expect(setup({ endpoints: [{ url: hook.url, secretEnv: 'NOTIFIER_TEST_UNSET_SECRET' }] })).rejects.toThrow(/NOTIFIER_TEST_UNSET_SECRET is not set/)
  })
})
