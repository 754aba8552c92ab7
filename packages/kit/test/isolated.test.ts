import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { Context, Logger } from 'cordis'
import { dispatchIsolated } from '@goalkeeper/kit'

declare module 'cordis' {
  interface Events {
    'test/isolated'(calls: string[]): void | Promise<void>
  }
}

const exporter = { colors: false as const, export: () => {} }

async function app() {
  const root = new Context()
  const errors: string[] = []
  root.logger.exporter({ levels: { default: 3 }, export: (m) => { if (m.type === 'error') errors.push(Logger.format(exporter, m)) } })
  let child!: Context
  await root.plugin({ name: 'child', apply: (ctx: Context) => { child = ctx } })
  return { root, child, errors }
}

/** Rejections that reach the process instead of being contained. */
const leaked: unknown[] = []
const onLeak = (reason: unknown) => void leaked.push(reason)
process.on('unhandledRejection', onLeak)
afterEach(() => { leaked.length = 0 })
afterAll(() => { process.off('unhandledRejection', onLeak) })

/** Resolves after every pending microtask and one macrotask: long enough for any contained rejection to be logged. */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve))

describe('dispatchIsolated', () => {
  it('runs every listener, in Cordis order, even after a synchronous throw, before it returns', async () => {
    const { root, child, errors } = await app()
    root.on('test/isolated', (calls) => { calls.push('root'); throw new Error('first one throws') })
    child.on('test/isolated', (calls) => { calls.push('child') })
    root.on('test/isolated', (calls) => { calls.push('prepended'); throw new Error('prepended throws') }, true)
    child.on('test/isolated', (calls) => { calls.push('global') }, { global: true })
    root.isolate('sessions').on('test/isolated', (calls) => { calls.push('isolated ctx') })

    const calls: string[] = []
    dispatchIsolated(child, 'test/isolated', calls)
    expect(calls).toEqual(['prepended', 'root', 'child', 'global', 'isolated ctx'])

    // The same listeners, in the same order, as Cordis's own parallel dispatch.
    const reference: string[] = []
    await child.parallel('test/isolated', reference).catch(() => {})
    expect(calls).toEqual(reference)

    await settled()
    expect(errors.join('\n')).toContain('first one throws')
    expect(errors.join('\n')).toContain('prepended throws')
    expect(leaked).toEqual([])
  })

  it('logs an async rejection instead of leaking it, and does not wait for async listeners', async () => {
    const { root, errors } = await app()
    let release!: () => void
    const held = new Promise<void>((resolve) => { release = resolve })
    root.on('test/isolated', async (calls) => { calls.push('async'); await held; throw new Error('late rejection') })
    root.on('test/isolated', (calls) => { calls.push('sync') })
    const calls: string[] = []
    dispatchIsolated(root, 'test/isolated', calls)
    expect(calls).toEqual(['async', 'sync'])
    release()
    await held
    await settled()
    expect(errors).toEqual([expect.stringContaining('late rejection')])
    expect(leaked).toEqual([])
  })

  it('stops calling a disposed listener and still reports the dispatch to internal/dispatch listeners', async () => {
    const { root, child } = await app()
    const seen: string[] = []
    const off = child.on('test/isolated', (calls) => { calls.push('listener') })
    root.on('internal/dispatch' as any, (_type: string, name: string) => { seen.push(name) })
    const calls: string[] = []
    dispatchIsolated(root, 'test/isolated', calls)
    off()
    dispatchIsolated(root, 'test/isolated', calls)
    expect(calls).toEqual(['listener'])
    expect(seen).toEqual(['test/isolated', 'test/isolated'])
  })

  it('calls the listeners there were when it started, as Cordis does: one added meanwhile waits, one removed meanwhile still runs', async () => {
    const dispatchWith = async (dispatch: (root: Context, calls: string[]) => Promise<unknown> | void) => {
      const { root } = await app()
      let off = () => {}
      root.on('test/isolated', (calls) => {
        calls.push('first')
        root.on('test/isolated', (more) => { more.push('added') })
        off()
      })
      off = root.on('test/isolated', (calls) => { calls.push('removed') })
      const calls: string[] = []
      await dispatch(root, calls)
      return calls
    }
    const isolated = await dispatchWith((root, calls) => dispatchIsolated(root, 'test/isolated', calls))
    expect(isolated).toEqual(['first', 'removed'])
    expect(await dispatchWith((root, calls) => root.parallel('test/isolated', calls))).toEqual(isolated)
  })
})
