import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { setup, type Setup } from './helpers.ts'

let t: Setup
beforeEach(async () => {
  t = await setup({ maxReadBytes: 2048 })
})
afterEach(async () => {
  await t.dispose()
})

const file = (name: string) => path.join(t.workspace, name)
const lines = (count: number) => Array.from({ length: count }, (_, i) => `line ${i + 1}`).join('\n') + '\n'

describe('read_file', () => {
  it('numbers lines', async () => {
    await fs.writeFile(file('a.txt'), 'alpha\r\nbeta\n\ngamma')
    expect(await t.run('read_file', { path: 'a.txt' })).toEqual({ ok: true, content: '     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma' })
  })

  it('reads an inclusive line range and says where the file ends', async () => {
    await fs.writeFile(file('a.txt'), lines(10))
    expect((await t.run('read_file', { path: 'a.txt', start_line: 3, end_line: 4 })).content).toBe('     3\tline 3\n     4\tline 4')
    expect((await t.run('read_file', { path: 'a.txt', start_line: 9 })).content).toBe('     9\tline 9\n    10\tline 10\n[End of file: a.txt has 10 lines.]')
    expect((await t.run('read_file', { path: 'a.txt', start_line: 20 })).content).toBe('[a.txt has 10 lines; start_line 20 is past the end.]')
    expect((await t.run('read_file', { path: 'a.txt', start_line: 5, end_line: 2 })).error?.code).toBe('INVALID_RANGE')
    expect((await t.run('read_file', { path: 'a.txt', start_line: 0 })).error?.code).toBe('INVALID_ARGUMENTS')
  })

  it('stops at the byte cap with a note telling how to continue', async () => {
    await fs.writeFile(file('big.txt'), lines(1000))
    const result = await t.run('read_file', { path: 'big.txt' })
    expect(result.ok).toBe(true)
    const body = result.content.split('\n')
    const note = body.pop()!
    expect(Buffer.byteLength(body.join('\n'))).toBeLessThanOrEqual(2048)
    const last = body.length
    expect(body[last - 1]).toBe(`${String(last).padStart(6)}\tline ${last}`)
    expect(note).toBe(`[Stopped at the 2048-byte limit after line ${last} of big.txt (${lines(1000).length} bytes). Continue with start_line=${last + 1}.]`)
    const next = await t.run('read_file', { path: 'big.txt', start_line: last + 1, end_line: last + 1 })
    expect(next.content).toBe(`${String(last + 1).padStart(6)}\tline ${last + 1}`)
  })

  it('shows a cut first line when one line exceeds the cap', async () => {
    await fs.writeFile(file('wide.txt'), 'w'.repeat(10_000) + '\nnext\n')
    const result = await t.run('read_file', { path: 'wide.txt' })
    expect(result.content).toContain('[line 1 cut at 2048 bytes]')
    expect(result.content).toContain('Continue with start_line=2.')
  })

  it('refuses binary files, directories and missing files clearly', async () => {
    await fs.writeFile(file('bin.dat'), Buffer.from([0x50, 0x4b, 0x00, 0x01, 0x02]))
    await fs.mkdir(file('dir'))
    const binary = await t.run('read_file', { path: 'bin.dat' })
    expect(binary.error?.code).toBe('BINARY_FILE')
    expect(binary.content).toContain('binary')
    const dir = await t.run('read_file', { path: 'dir' })
    expect(dir.error?.code).toBe('IS_A_DIRECTORY')
    expect(dir.content).toContain('list_dir')
    const missing = await t.run('read_file', { path: 'nope.txt' })
    expect(missing.error?.code).toBe('NOT_FOUND')
    expect(missing.content).toBe('"nope.txt" does not exist. Use list_dir or search to find the right path.')
  })

  it('says when a file is empty', async () => {
    await fs.writeFile(file('empty.txt'), '')
    expect((await t.run('read_file', { path: 'empty.txt' })).content).toBe('(empty file: empty.txt)')
  })
})

describe('write_file', () => {
  it('creates parent directories and reports what it wrote', async () => {
    const result = await t.run('write_file', { path: 'src/deep/new.ts', content: 'export {}\nconst x = 1\n' })
    expect(result).toEqual({ ok: true, content: 'Created src/deep/new.ts (2 lines, 22 bytes).' })
    expect(await fs.readFile(file('src/deep/new.ts'), 'utf8')).toBe('export {}\nconst x = 1\n')
  })

  it('overwrites an existing file', async () => {
    await fs.writeFile(file('a.txt'), 'old')
    expect((await t.run('write_file', { path: 'a.txt', content: 'new' })).content).toBe('Overwrote a.txt (1 lines, 3 bytes).')
    expect(await fs.readFile(file('a.txt'), 'utf8')).toBe('new')
  })

  it('refuses to replace a directory or to write below a file', async () => {
    await fs.mkdir(file('dir'))
    await fs.writeFile(file('plain'), 'x')
    expect((await t.run('write_file', { path: 'dir', content: 'x' })).error?.code).toBe('IS_A_DIRECTORY')
    expect((await t.run('write_file', { path: 'plain/child.txt', content: 'x' })).error?.code).toMatch(/NOT_A_DIRECTORY|EEXIST/)
    expect(await fs.readFile(file('plain'), 'utf8')).toBe('x')
  })
})

describe('edit_file', () => {
  beforeEach(async () => {
    await fs.writeFile(file('code.ts'), 'const a = 1\nconst b = 2\nconst a2 = 1\n')
  })

  it('replaces a unique string and reports the line', async () => {
    const result = await t.run('edit_file', { path: 'code.ts', old_string: 'const b = 2', new_string: 'const b = 3' })
    expect(result).toEqual({ ok: true, content: 'Edited code.ts: replaced 1 occurrence (first at line 2).' })
    expect(await fs.readFile(file('code.ts'), 'utf8')).toBe('const a = 1\nconst b = 3\nconst a2 = 1\n')
  })

  it('refuses a missing match and leaves the file alone', async () => {
    const result = await t.run('edit_file', { path: 'code.ts', old_string: 'const c = 4', new_string: 'x' })
    expect(result.error?.code).toBe('EDIT_NO_MATCH')
    expect(result.content).toContain('not found in code.ts (0 occurrences)')
    expect(await fs.readFile(file('code.ts'), 'utf8')).toBe('const a = 1\nconst b = 2\nconst a2 = 1\n')
  })

  it('refuses an ambiguous match with the count, unless replace_all', async () => {
    const result = await t.run('edit_file', { path: 'code.ts', old_string: '= 1', new_string: '= 9' })
    expect(result.error?.code).toBe('EDIT_AMBIGUOUS')
    expect(result.content).toContain('occurs 2 times in code.ts')
    expect(result.content).toContain('replace_all')
    expect(await fs.readFile(file('code.ts'), 'utf8')).toBe('const a = 1\nconst b = 2\nconst a2 = 1\n')
    const all = await t.run('edit_file', { path: 'code.ts', old_string: '= 1', new_string: '= 9', replace_all: true })
    expect(all.content).toBe('Edited code.ts: replaced 2 occurrences (first at line 1).')
    expect(await fs.readFile(file('code.ts'), 'utf8')).toBe('const a = 9\nconst b = 2\nconst a2 = 9\n')
  })

  it('inserts the replacement literally ($ patterns are not special)', async () => {
    await t.run('edit_file', { path: 'code.ts', old_string: 'const b = 2', new_string: "const b = '$&$1$$'" })
    expect(await fs.readFile(file('code.ts'), 'utf8')).toContain("const b = '$&$1$$'")
  })

  it('matches \\n in old_string against a CRLF file and keeps CRLF', async () => {
    await fs.writeFile(file('win.txt'), 'one\r\ntwo\r\nthree\r\n')
    const result = await t.run('edit_file', { path: 'win.txt', old_string: 'one\ntwo', new_string: 'uno\ndos' })
    expect(result.ok).toBe(true)
    expect(await fs.readFile(file('win.txt'), 'utf8')).toBe('uno\r\ndos\r\nthree\r\n')
  })

  it('refuses missing files, empty old_string and no-op edits', async () => {
    expect((await t.run('edit_file', { path: 'none.ts', old_string: 'a', new_string: 'b' })).error?.code).toBe('NOT_FOUND')
    expect((await t.run('edit_file', { path: 'code.ts', old_string: '', new_string: 'b' })).error?.code).toBe('INVALID_ARGUMENTS')
    expect((await t.run('edit_file', { path: 'code.ts', old_string: 'const', new_string: 'const' })).error?.code).toBe('EDIT_NO_CHANGE')
  })
})
