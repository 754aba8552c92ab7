import { afterEach, expect, it, vi } from 'vitest'
import type { Context } from 'cordis'
import { createHarness, deferred, hangingCall } from '../src/index.ts'

afterEach(() => {
  vi.restoreAllMocks()
})

it('dispose names a plugin whose unload is slow, what it held and the agents, and still waits for it', async () => {
  const h = await createHarness({ slowDisposeMs: 50 })
  const release = deferred()
  const warned = deferred<string>()
  const warnings: string[] = []
  vi.spyOn(console, 'warn').mockImplementation((line: string) => {
    warnings.push(line)
    warned.resolve(line)
  })
  // Its shutdown ends only once the harness has said it is slow: the report comes from the timer, not the end.
  await h.load({
    name: 'slow-unload',
    apply: (ctx: Context) => {
      ctx.effect(function* () {
        yield ctx.on('agent/turn-end', () => {})
        yield async () => {
          await warned.promise
          await release.promise
        }
      }, 'slow shutdown')
    },
  })
  const agent = await h.createAgent()
  const call = hangingCall()
  h.scripted.push(call.step)
  agent.send({ content: 'go' })
  await call.reached

  let finished = false
  const disposing = h.dispose().then(() => (finished = true))
  const first = await warned.promise
  expect(first).toMatch(/^harness: unloading plugin slow-unload has taken over 0\.05 s \(state \d\); its effects when the unload began: slow shutdown \[ctx\.on\("agent\/turn-end"\)\]; agents: /)
  // The agent-loop is unloaded after it (reverse load order), so the turn is still open.
  expect(first).toContain(`${agent.id} (status running (running), turn 1, 0 queued)`)
  expect(finished).toBe(false)
  release.resolve()
  await disposing
  // On a busy machine another plugin's unload may pass 0.05 s too; only this plugin's reports are checked.
  const mine = warnings.filter((line) => line.includes(' slow-unload '))
  expect(mine.at(-1)).toMatch(/^harness: plugin slow-unload unloaded after \d+\.\d s; agents: /)
  expect(mine).toHaveLength(2)
})

it('says nothing when every unload is quick', async () => {
  const warn = vi.spyOn(console, 'warn')
  const h = await createHarness({ slowDisposeMs: 60_000 })
  await h.createAgent()
  await h.dispose()
  expect(warn).not.toHaveBeenCalled()
})
