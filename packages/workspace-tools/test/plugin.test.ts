import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as tools from '@goalkeeper/tools'
import * as workspaceTools from '../src/index.ts'
import { callContext, isAlive, waitForFile } from './helpers.ts'

let root: Context
let dir: string
beforeEach(async () => {
  root = new Context()
  await root.plugin(tools, {})
  dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'gk-')))
})
afterEach(async () => {
  await root.fiber.dispose()
  await fs.rm(dir, { recursive: true, force: true })
})

const names = () => root.tools.list().map((tool) => tool.name)

describe('workspace-tools plugin', () => {
  it('registers every tool by default and removes them when unloaded', async () => {
    const fiber = await root.plugin(workspaceTools, {})
    expect(names()).toEqual(['read_file', 'write_file', 'edit_file', 'list_dir', 'search', 'run_command'])
    await fiber.dispose()
    expect(names()).toEqual([])
  })

  it('says what each tool does: its kind, a title and the files a call touches', async () => {
    await root.plugin(workspaceTools, {})
    const tool = (name: string) => root.tools.get(name)!
    expect(root.tools.list().map((t) => [t.name, tools.kindOf(t), tools.isReadOnly(t)])).toEqual([
      ['read_file', 'read', true], ['write_file', 'edit', false], ['edit_file', 'edit', false],
      ['list_dir', 'read', true], ['search', 'search', true], ['run_command', 'execute', false],
    ])
    expect(tool('read_file').title!({ path: 'a.ts', start_line: 3 })).toBe('Read a.ts (lines 3-end)')
    expect(tool('read_file').locations!({ path: 'a.ts', start_line: 3 })).toEqual([{ path: 'a.ts', line: 3 }])
    expect(tool('search').title!({ pattern: 'x+', path: 'src' })).toBe('Search "x+" in src')
    expect(tool('list_dir').locations!({})).toEqual([{ path: '.' }])
    expect(tool('run_command').title!({ command: `echo ${'x'.repeat(200)}` })).toMatch(/^Run echo x+…?$/)
    expect(tool('run_command').locations).toBeUndefined()
    // Shown before a call runs, so arguments that did not validate must not break them.
    expect(tool('edit_file').locations!({ path: 7 })).toEqual([])
    expect(tool('edit_file').diff!({ path: 'a.ts', old_string: 'a', new_string: 'b' }, { ok: true, content: 'Edited a.ts' }))
      .toEqual({ path: 'a.ts', oldText: 'a', newText: 'b' })
    expect(tool('edit_file').diff!({ path: 'a.ts', old_string: 'a', new_string: 'b' }, { ok: false, content: 'no match' })).toBeUndefined()
    expect(tool('write_file').diff!({ path: 'n.ts', content: 'new' }, { ok: true, content: 'Created n.ts (1 lines, 3 bytes).' }))
      .toEqual({ path: 'n.ts', oldText: null, newText: 'new' })
    expect(tool('write_file').diff!({ path: 'n.ts', content: 'new' }, { ok: true, content: 'Overwrote n.ts (1 lines, 3 bytes).' })).toBeUndefined()
  })

  it('registers only the allow-listed tools, and never run_command when commands are off', async () => {
    await root.plugin(workspaceTools, { tools: ['read_file', 'run_command'], allowCommands: false })
    expect(names()).toEqual(['read_file'])
  })

  it('refuses unknown names in the allow-list', async () => {
    await expect(root.plugin(workspaceTools, { tools: ['read_file', 'rm_rf'] as never })).rejects.toThrow()
    expect(names()).toEqual([])
  })

  it('uses a configured root, resolved against the process cwd, whatever the agent cwd is', async () => {
    await fs.writeFile(path.join(dir, 'here.txt'), 'configured root\n')
    await root.plugin(workspaceTools, { root: path.relative(process.cwd(), dir) })
    const result = await root.tools.execute({ id: 'c', name: 'read_file', arguments: '{"path":"here.txt"}' }, callContext('/'))
    expect(result.content).toBe('     1\tconfigured root')
  })

  it('reports a missing root clearly', async () => {
    await root.plugin(workspaceTools, {})
    const result = await root.tools.execute({ id: 'c', name: 'list_dir', arguments: '{}' }, callContext(path.join(dir, 'gone')))
    expect(result.error?.code).toBe('ROOT_NOT_FOUND')
    expect(result.content).toContain(path.join(dir, 'gone'))
  })

  it('kills running commands when unloaded', async () => {
    const fiber = await root.plugin(workspaceTools, {})
    const pids = path.join(dir, 'pids')
    const pending = root.tools.get('run_command')!.execute(
      { command: `sleep 60 & echo "$!" > "${pids}.tmp" && mv "${pids}.tmp" "${pids}"; wait` },
      callContext(dir),
    )
    const child = Number((await waitForFile(pids)).trim())
    expect(isAlive(child)).toBe(true)
    await fiber.dispose()
    expect(isAlive(child)).toBe(false)
    const result = await pending
    expect(typeof result === 'object' && result.error?.code).toBe('ABORTED')
  })

  it('tells the model the limits in the descriptions', async () => {
    await root.plugin(workspaceTools, { maxReadBytes: 4096, maxSearchResults: 7, commandTimeoutMs: 5000, maxOutputChars: 2000, maxListEntries: 9 })
    const describe = (name: string) => root.tools.get(name)!.description
    expect(describe('read_file')).toContain('4096 bytes')
    expect(describe('search')).toContain('at most 7 matching lines')
    expect(describe('run_command')).toContain('Default timeout 5000 ms')
    expect(describe('run_command')).toContain('2000 characters')
    expect(describe('list_dir')).toContain('At most 9 entries')
  })
})
