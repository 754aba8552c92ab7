import { afterEach, describe, expect, it } from 'vitest'
import { collect, delta, frame, lastOf, pause, providerFor, request, startServer, startSse, textReply, type Handler, type TestServer } from './fake-server.ts'

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const setup = async (handlers: Handler[], overrides: Record<string, unknown> = {}) => {
  server = await startServer(handlers)
  return providerFor(server.url, overrides)
}

describe('stream trouble is told (onStream, the plugin\'s model/stream)', () => {
  it('a stream that breaks after output: one broken notice with the frames that arrived, then the TRANSPORT finish', async () => {
    const { provider, notices } = await setup([(res) => {
      startSse(res)
      res.write(delta({ role: 'assistant', content: 'Hel' }) + delta({ content: 'lo' }) + delta({ content: '!' }), () => res.socket!.destroy())
    }, textReply('must not be used')])
    const chunks = await collect(provider.stream(request(), new AbortController().signal))
    expect(chunks.filter((chunk) => chunk.type === 'text').map((chunk) => (chunk as { text: string }).text).join('')).toBe('Hello!')
    expect(lastOf(chunks)).toMatchObject({ type: 'finish', reason: 'error', error: { code: 'TRANSPORT' } })
    expect(notices).toEqual([{ kind: 'broken', frames: 3, error: (lastOf(chunks) as { error: unknown }).error }])
    expect(server!.received).toHaveLength(1)
  })

  it('a failure before any output is retried silently here (model/retry tells it): no broken notice', async () => {
    const { provider, notices } = await setup([(res) => void res.socket!.destroy(), textReply('recovered')], { maxRetries: 1 })
    const chunks = await collect(provider.stream(request(), new AbortController().signal))
    expect(lastOf(chunks)).toEqual({ type: 'finish', reason: 'stop' })
    expect(notices).toEqual([])
  })

  it('a silence in the body is told at each stallNoticeMs until data comes again; the answer then completes', async () => {
    const { provider, notices } = await setup([async (res) => {
      startSse(res)
      res.write(delta({ role: 'assistant', content: 'Thinking' }))
      // Paces the server: a silence of several notice intervals, shorter than the idle timeout.
      await pause(400)
      res.end(delta({ content: ' done.' }) + delta({}, 'stop') + frame('[DONE]'))
    }], { stallNoticeMs: 100, idleTimeoutMs: 5000 })
    const chunks = await collect(provider.stream(request(), new AbortController().signal))
    expect(lastOf(chunks)).toEqual({ type: 'finish', reason: 'stop' })
    expect(notices.length).toBeGreaterThanOrEqual(2)
    expect(notices.slice(0, 2)).toEqual([{ kind: 'stalled', silentMs: 100, limitMs: 5000 }, { kind: 'stalled', silentMs: 200, limitMs: 5000 }])
  })

  it('a stall that reaches the idle timeout is told before it, never at or past it; stallNoticeMs 0 is silent', async () => {
    const stalled: Handler = (res) => {
      startSse(res)
      res.write(delta({ role: 'assistant', content: 'Thinking' }))
    }
    const told = await setup([stalled], { stallNoticeMs: 100, idleTimeoutMs: 350, maxRetries: 0 })
    const chunks = await collect(told.provider.stream(request(), new AbortController().signal))
    expect(lastOf(chunks)).toMatchObject({ error: { code: 'TRANSPORT', message: expect.stringContaining('stalled') } })
    const silences = told.notices.flatMap((notice) => (notice.kind === 'stalled' ? [notice.silentMs] : []))
    // How many fit before the timeout depends on the timers' drift; each is a next multiple below the limit.
    expect(silences.length).toBeGreaterThanOrEqual(1)
    expect(silences).toEqual(silences.map((_, index) => (index + 1) * 100))
    expect(Math.max(...silences)).toBeLessThan(350)
    expect(told.notices.at(-1)).toMatchObject({ kind: 'broken', frames: 1 })
    await server!.close()

    const quiet = await setup([stalled], { stallNoticeMs: 0, idleTimeoutMs: 150, maxRetries: 0 })
    await collect(quiet.provider.stream(request(), new AbortController().signal))
    expect(quiet.notices.filter((notice) => notice.kind === 'stalled')).toEqual([])
  })
})
