// The width helpers of commands/render/text.ts: wrapping at spaces, tables fitted by shortening columns.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { clipStart, eventWidth, fitLine, fitLines, fitTable, keepEnd, keepStart, outputWidth, shownLength, wrapLine, wrapLines } from '../src/commands/render/text.ts'

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

  it('event lines have a width on a terminal or with COLUMNS, and none when piped without it', () => {
    vi.stubEnv('COLUMNS', '')
    expect(eventWidth({ isTTY: true, columns: 132 })).toBe(132)
    expect(eventWidth({ isTTY: false, columns: 132 })).toBeUndefined()
    vi.stubEnv('COLUMNS', '100')
    expect(eventWidth({})).toBe(100)
    vi.stubEnv('COLUMNS', 'wide')
    expect(eventWidth({})).toBeUndefined()
  })

  it('cuts by the characters shown, an ellipsis last, and never an escape sequence in half', () => {
    expect(fitLine('abcdef', 6)).toBe('abcdef')
    expect(fitLine('abcdefg', 6)).toBe('abcde…')
    // An emoji is one character, not two code units.
    expect(fitLine('ab😀cdefg', 4)).toBe('ab😀…')
    const red = '\x1b[31m'
    const reset = '\x1b[0m'
    const coloured = `${red}+${'x'.repeat(20)}${reset}`
    expect(shownLength(coloured)).toBe(21)
    expect(fitLine(coloured, 30)).toBe(coloured)
    // The colour's reset after the cut is kept, so the colour ends with the line.
    expect(fitLine(coloured, 6)).toBe(`${red}+xxxx…${reset}`)
    expect(fitLine(`ab${red}cdefgh${reset}`, 4)).toBe(`ab${red}c…${reset}`)
    expect(fitLines('abcdefg\nxy', 4)).toBe('abc…\nxy')
    expect(fitLines('abcdefg', undefined)).toBe('abcdefg')
  })

  it('wraps prose at spaces under a hang, cutting only a word longer than the width', () => {
    expect(wrapLines('goalkeeper: one two three four five', 16, '  ')).toBe('goalkeeper: one\n  two three four\n  five')
    expect(wrapLines(`see ${'x'.repeat(30)} there`, 12)).toBe('see\nxxxxxxxxxxx…\nthere')
    expect(wrapLines('one two three four five', undefined)).toBe('one two three four five')
  })

  it('shortens a path at its start and a command at its end, so that what follows still fits', () => {
    const path = `docs/${'deep/'.repeat(10)}NOTES.md`
    const line = keepEnd('  ok write_file ', path, ': +3 -0 lines', 50)
    expect(Array.from(line).length).toBe(50)
    expect(line).toMatch(/^ {2}ok write_file …\S*\/deep\/NOTES\.md: \+3 -0 lines$/)
    expect(keepEnd('in ', path, '', undefined)).toBe(`in ${path}`)
    const check = keepStart('  check `', `test -f ${'x'.repeat(80)}`, '` failed (exit code 1)', 60)
    expect(Array.from(check).length).toBe(60)
    expect(check).toMatch(/^ {2}check `test -f x+…` failed \(exit code 1\)$/)
  })
})
