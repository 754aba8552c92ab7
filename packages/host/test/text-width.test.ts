// The width helpers of commands/render/text.ts: wrapping at spaces, tables fitted by shortening columns.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { clipStart, fitTable, outputWidth, wrapLine } from '../src/commands/render/text.ts'

afterEach(() => vi.unstubAllEnvs())

describe('fitting output to a width', () => {
  it('the width is the terminal\'s, else COLUMNS, else 80', () => {
    vi.stubEnv('COLUMNS', '')
    expect(outputWidth({ isTTY: true, columns: 132 })).toBe(132)
    expect(outputWidth({ isTTY: false, columns: 132 })).toBe(80)
    vi.stubEnv('COLUMNS', '100')
    expect(outputWidth({})).toBe(100)
    vi.stubEnv('COLUMNS', 'wide')
    expect(outputWidth({})).toBe(80)
  })

  it('wraps at spaces under a list label, and keeps a word longer than the width whole', () => {
    expect(wrapLine('  64   bad command line or configuration (unreadable cordis.yml)', 40)).toEqual([
      '  64   bad command line or configuration',
      '       (unreadable cordis.yml)',
    ])
    const path = `/tmp/${'x'.repeat(50)}`
    expect(wrapLine(`warning: ${path} is kept`, 30)).toEqual(['warning:', path, 'is kept'])
    expect(wrapLine('short', 30)).toEqual(['short'])
  })

  it('shortens the columns in the order given, keeping a path\'s end', () => {
    const rows = [
      ['ID', 'DIRECTORY', 'TITLE'],
      ['a1', '/home/me/projects/app', 'write the notes of the project down'],
    ]
    const lines = fitTable(rows, 30, [{ column: 1, min: 10, keep: 'end' }, { column: 2, min: 10 }])
    for (const line of lines) expect(Array.from(line).length).toBeLessThanOrEqual(30)
    expect(lines[1]).toBe('a1  …jects/app  write the not…')
    expect(clipStart('/home/me/app', 6)).toBe('…e/app')
    // Wide enough: nothing is cut.
    expect(fitTable(rows, 200, [{ column: 1, min: 10 }])[1]).toBe('a1  /home/me/projects/app  write the notes of the project down')
  })
})
