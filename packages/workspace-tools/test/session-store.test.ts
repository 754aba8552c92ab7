import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as tools from '@goalkeeper/tools'
import type { ToolResult } from '@goalkeeper/tools'
import { logFiles, sessionStack } from '@goalkeeper/test-kit'
import * as workspaceTools from '../src/index.ts'
import { callContext } from './helpers.ts'

let root: Context
let dir: string
let workspace: string
let store: string

beforeEach(async () => {
  dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'gk-')))
  workspace = path.join(dir, 'ws')
  store = path.join(workspace, '.goalkeeper', 'sessions')
  await fs.mkdir(workspace)
  await fs.writeFile(path.join(workspace, 'notes.txt'), 'session/header is a record type\n')
  root = new Context()
  await root.plugin(tools, {})
})
afterEach(async () => {
  await root.fiber.dispose()
  await fs.rm(dir, { recursive: true, force: true })
})

const run = (name: string, args: unknown): Promise<ToolResult> =>
  root.tools.execute({ id: 'call_1', name, arguments: JSON.stringify(args) }, callContext(workspace))

/** Loads the real session plugin with its store at `sessionDir` and writes one session to disk. */
async function withSessions(sessionDir = store) {
  await root.plugin(sessionStack, { dir: sessionDir })
  const opened = await root.sessions.create({ cwd: workspace })
  opened.append<string>('goal/change', { phase: 'active' })
  await root.sessions.flush(opened)
  return { file: opened.file, bytes: await fs.readFile(opened.file, 'utf8') }
}

function expectProtected(result: ToolResult) {
  expect(result.ok).toBe(false)
  expect(result.error?.code).toBe('PATH_PROTECTED')
  expect(result.error?.message).toContain('holds goalkeeper\'s session logs, which tools cannot read or change')
  expect(result.content).not.toContain('goal/change')
}

describe('the session store inside the workspace', () => {
  it('cannot be read, written or edited by the file tools', async () => {
    await root.plugin(workspaceTools, {})
    const { file, bytes } = await withSessions()
    const relative = path.relative(workspace, file)
    expectProtected(await run('read_file', { path: relative }))
    expectProtected(await run('read_file', { path: file }))
    expectProtected(await run('write_file', { path: relative, content: '{"forged":true}\n' }))
    expectProtected(await run('edit_file', { path: relative, old_string: 'active', new_string: 'complete' }))
    expectProtected(await run('write_file', { path: '.goalkeeper/sessions/new.jsonl', content: 'x\n' }))
    expectProtected(await run('write_file', { path: '.goalkeeper/sessions/sub/../other.jsonl', content: 'x\n' }))
    expect(await fs.readFile(file, 'utf8')).toBe(bytes)
    // The open session's writer lock and its seal stand next to it (and the listing's index); nothing else was created.
    expect(await logFiles(store)).toEqual([path.basename(file), `${path.basename(file)}.lock`, `${path.basename(file)}.seal`])
  })

  it('names the store in the message and refuses the directory itself', async () => {
    await root.plugin(workspaceTools, {})
    const { file } = await withSessions()
    const result = await run('read_file', { path: path.relative(workspace, file) })
    expect(result.error?.message).toContain('is inside ".goalkeeper/sessions"')
    expectProtected(await run('list_dir', { path: '.goalkeeper/sessions' }))
    expectProtected(await run('search', { pattern: 'goal', path: '.goalkeeper/sessions' }))
    expectProtected(await run('search', { pattern: 'goal', path: path.relative(workspace, file) }))
  })

  it('is shown by list_dir but not entered, and skipped by search', async () => {
    await root.plugin(workspaceTools, {})
    const { file } = await withSessions()
    const listing = await run('list_dir', { depth: 5 })
    expect(listing.ok).toBe(true)
    expect(listing.content).toContain('.goalkeeper/sessions/ (not listed: goalkeeper\'s session logs)')
    expect(listing.content).not.toContain(path.basename(file))
    const found = await run('search', { pattern: 'session/header|goal/change' })
    expect(found.content).toBe('notes.txt:1: session/header is a record type')
    const inParent = await run('search', { pattern: 'goal', path: '.goalkeeper' })
    expect(inParent.content).toContain('No matches')
  })

  it('cannot be reached through a symbolic link', async () => {
    await root.plugin(workspaceTools, {})
    const { file, bytes } = await withSessions()
    await fs.symlink(store, path.join(workspace, 'logs'))
    await fs.symlink(file, path.join(workspace, 'log.jsonl'))
    expectProtected(await run('read_file', { path: `logs/${path.basename(file)}` }))
    expectProtected(await run('write_file', { path: 'log.jsonl', content: 'forged\n' }))
    expectProtected(await run('list_dir', { path: 'logs' }))
    expectProtected(await run('run_command', { command: 'pwd', cwd: 'logs' }))
    expect(await fs.readFile(file, 'utf8')).toBe(bytes)
  })

  it('is compared by real path when its configured path goes through a link', async () => {
    await root.plugin(workspaceTools, {})
    await fs.symlink(workspace, path.join(dir, 'ws-link'))
    const { file } = await withSessions(path.join(dir, 'ws-link', '.goalkeeper', 'sessions'))
    expectProtected(await run('read_file', { path: path.relative(workspace, await fs.realpath(file)) }))
  })

  it('refuses run_command with a cwd inside it, but not next to it', async () => {
    await root.plugin(workspaceTools, {})
    await withSessions()
    expectProtected(await run('run_command', { command: 'ls', cwd: '.goalkeeper/sessions' }))
    const beside = await run('run_command', { command: 'pwd', cwd: '.goalkeeper' })
    expect(beside.ok).toBe(true)
    expect(beside.content).toContain(path.join(workspace, '.goalkeeper'))
  })

  it('is protected before it exists, and the refusal creates nothing', async () => {
    await root.plugin(workspaceTools, {})
    await root.plugin(sessionStack, { dir: store })
    expectProtected(await run('write_file', { path: '.goalkeeper/sessions/forged.jsonl', content: 'x\n' }))
    await expect(fs.stat(store)).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('is looked up at call time, so a sessions plugin loaded or unloaded later counts', async () => {
    await root.plugin(workspaceTools, {})
    await fs.mkdir(store, { recursive: true })
    await fs.writeFile(path.join(store, 'old.jsonl'), 'plain\n')
    expect((await run('read_file', { path: '.goalkeeper/sessions/old.jsonl' })).ok).toBe(true)
    const fiber = await root.plugin(sessionStack, { dir: store })
    expectProtected(await run('read_file', { path: '.goalkeeper/sessions/old.jsonl' }))
    await fiber.dispose()
    expect((await run('read_file', { path: '.goalkeeper/sessions/old.jsonl' })).ok).toBe(true)
  })
})

describe('a session store elsewhere, or none', () => {
  it('protects nothing inside the workspace when the store is outside it', async () => {
    await root.plugin(workspaceTools, {})
    await withSessions(path.join(dir, 'elsewhere'))
    await fs.mkdir(store, { recursive: true })
    await fs.writeFile(path.join(store, 'mine.jsonl'), 'my data\n')
    expect((await run('read_file', { path: '.goalkeeper/sessions/mine.jsonl' })).content).toBe('     1\tmy data')
    expect((await run('list_dir', { depth: 3 })).content).toContain('.goalkeeper/sessions/mine.jsonl')
  })

  it('works without the sessions plugin and protects nothing', async () => {
    await root.plugin(workspaceTools, {})
    await fs.mkdir(store, { recursive: true })
    await fs.writeFile(path.join(store, 'mine.jsonl'), 'my data\n')
    expect((await run('write_file', { path: '.goalkeeper/sessions/mine.jsonl', content: 'changed\n' })).ok).toBe(true)
    expect((await run('search', { pattern: 'changed' })).content).toBe('.goalkeeper/sessions/mine.jsonl:1: changed')
    expect((await run('run_command', { command: 'cat mine.jsonl', cwd: '.goalkeeper/sessions' })).ok).toBe(true)
  })
})
