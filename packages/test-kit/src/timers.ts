import { expect, vi } from 'vitest'
import type { Fiber } from 'cordis'

/** Watches timers with one distinctive delay: which were started, and which of those were cleared. Undo with `vi.restoreAllMocks()`. */
export function watchTimers(delay: number) {
  const started = new Set<unknown>()
  const cleared = new Set<unknown>()
  const realSet = globalThis.setTimeout
  const realClear = globalThis.clearTimeout
  vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const handle = realSet(fn, ms, ...args)
    if (ms === delay) started.add(handle)
    return handle
  }) as typeof setTimeout)
  vi.spyOn(globalThis, 'clearTimeout').mockImplementation((handle) => {
    if (started.has(handle)) cleared.add(handle)
    return realClear(handle)
  })
  return { started, cleared }
}

/** Unloads `fiber` while one watched timer is pending, and checks that the unload cleared exactly that timer. */
export async function expectUnloadClearsTimer(fiber: Fiber, timers: ReturnType<typeof watchTimers>): Promise<void> {
  expect(timers.started.size).toBe(1)
  expect(timers.cleared.size).toBe(0)
  await fiber.dispose()
  expect(timers.cleared).toEqual(timers.started)
}
