import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import { ExitCode, SignalController } from '../src/index.ts'

function setup() {
  const target = new EventEmitter()
  const notes: string[] = []
  const exits: number[] = []
  let exited!: (code: number) => void
  const exit = new Promise<number>((resolve) => (exited = resolve))
  let finish!: () => void
  let shutdowns = 0
  const controller = new SignalController({
    process: target as any,
    note: (line) => notes.push(line),
    exit: (code) => {
      exits.push(code)
      exited(code)
    },
    shutdown: () => {
      shutdowns++
      return new Promise<void>((resolve) => (finish = resolve))
    },
  }).install()
  return { target, notes, exits, exit, controller, finish: () => finish(), shutdowns: () => shutdowns }
}

describe('signals', () => {
  it('SIGTERM runs the ordered shutdown, then exits 0', async () => {
    const s = setup()
    s.target.emit('SIGTERM', 'SIGTERM')
    expect(s.shutdowns()).toBe(1)
    expect(s.exits).toEqual([])
    s.finish()
    expect(await s.exit).toBe(ExitCode.OK)
  })

  it('a handler can claim the first SIGINT; the next one shuts down; one more forces the exit', async () => {
    const s = setup()
    const seen: number[] = []
    s.controller.onInterrupt(({ count }) => {
      seen.push(count)
      return count === 1
    })
    s.target.emit('SIGINT', 'SIGINT')
    expect(s.shutdowns()).toBe(0)
    s.target.emit('SIGINT', 'SIGINT')
    expect(s.shutdowns()).toBe(1)
    s.target.emit('SIGINT', 'SIGINT')
    expect(await s.exit).toBe(ExitCode.INTERRUPTED)
    expect(seen).toEqual([1, 2])
    expect(s.notes).toEqual(['SIGINT: shutting down (send it again to force)', 'SIGINT during shutdown: exiting now'])
  })

  it('an unregistered or throwing handler does not stop the shutdown', async () => {
    const s = setup()
    const off = s.controller.onInterrupt(() => true)
    off()
    s.controller.onInterrupt(() => {
      throw new Error('handler bug')
    })
    s.controller.exitCode = ExitCode.PAUSED
    s.target.emit('SIGINT', 'SIGINT')
    s.finish()
    expect(await s.exit).toBe(ExitCode.PAUSED)
    expect(s.notes[0]).toBe('interrupt handler failed: handler bug')
  })

  it('uninstall removes the process listeners', () => {
    const s = setup()
    s.controller.uninstall()
    expect(s.target.listenerCount('SIGINT') + s.target.listenerCount('SIGTERM')).toBe(0)
  })
})
