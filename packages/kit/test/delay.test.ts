import { describe, expect, it } from 'vitest'
import { delay, nextMacrotask } from '@goalkeeper/kit'

describe('delay', () => {
  it('resolves true once the time has passed', async () => {
    expect(await delay(1)).toBe(true)
    expect(await delay(1, { ref: false })).toBe(true)
  })

  it('resolves false as soon as the signal aborts, and at once for a signal already aborted', async () => {
    const controller = new AbortController()
    const waiting = delay(600_000, { signal: controller.signal })
    controller.abort()
    expect(await waiting).toBe(false)
    expect(await delay(600_000, { signal: AbortSignal.abort() })).toBe(false)
  })

  it('releases its abort listener when the time has passed', async () => {
    const controller = new AbortController()
    let listeners = 0
    const add = controller.signal.addEventListener.bind(controller.signal)
    const remove = controller.signal.removeEventListener.bind(controller.signal)
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => { listeners++; add(...args) }) as typeof add
    controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => { listeners--; remove(...args) }) as typeof remove
    expect(await delay(1, { signal: controller.signal })).toBe(true)
    expect(listeners).toBe(0)
  })
})

describe('nextMacrotask', () => {
  it('resolves after work already queued as a macrotask', async () => {
    const order: string[] = []
    setImmediate(() => order.push('queued first'))
    await nextMacrotask()
    order.push('after')
    expect(order).toEqual(['queued first', 'after'])
  })
})
