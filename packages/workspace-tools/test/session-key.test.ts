// The session signing key and every session store, out of reach of every tool whatever the workspace: a fake
// home directory (HOME and the XDG directories point into it) holding the key and the stores, used as the
// workspace, as a neighbour of the workspace, and with the workspace at /. The real session plugin makes the
// key and the logs; commands run in the real bubblewrap sandbox. The permission mode's answer is given as
// the permissions service would give it in workspace-write (its own tests cover how it decides).
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { probeSandbox, type CommandSandboxProvider } from '@goalkeeper/sandbox'
import * as tools from '@goalkeeper/tools'
import type { ToolResult } from '@goalkeeper/tools'
import { sessionStack } from '@goalkeeper/test-kit'
import * as workspaceTools from '../src/index.ts'
import { callContext } from './helpers.ts'

const VARIABLES = ['HOME', 'XDG_CONFIG_HOME', 'XDG_STATE_HOME'] as const
let saved: Record<string, string | undefined>
let root: Context
let home: string
let keyFile: string
let key: string
let sessionsRoot: string
let ownLog: { file: string; bytes: string }
let otherLog: string

beforeEach(async () => {
  // Under the real home directory, not /tmp: a sandboxed command's /tmp is private, which would hide it anyway.
  home = await fs.realpath(await fs.mkdtemp(path.join(os.homedir(), '.gk-home-')))
  saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]))
  process.env.HOME = home
  process.env.XDG_CONFIG_HOME = path.join(home, '.config')
  process.env.XDG_STATE_HOME = path.join(home, '.local', 'state')
  root = new Context()
  await root.plugin(tools, {})
  // Defaults: the key in $XDG_CONFIG_HOME/goalkeeper, the logs under $XDG_STATE_HOME/goalkeeper/sessions.
  await root.plugin(sessionStack, {})
  const opened = await root.sessions.create({ cwd: home })
  opened.append<string>('goal/change', { phase: 'active' })
  await root.sessions.flush(opened)
  ownLog = { file: opened.file, bytes: await fs.readFile(opened.file, 'utf8') }
  keyFile = path.join(home, '.config', 'goalkeeper', 'session.key')
  key = (await fs.readFile(keyFile, 'utf8')).trim()
  sessionsRoot = path.join(home, '.local', 'state', 'goalkeeper', 'sessions')
  // Another workspace's sessions, which a model here must not forge either.
  otherLog = path.join(sessionsRoot, 'other-0123456789abcdef', 'other.jsonl')
  await fs.mkdir(path.dirname(otherLog), { recursive: true })
  await fs.writeFile(otherLog, '{"type":"session/header"}\n')
  const status = await probeSandbox()
  expect(status).toMatchObject({ available: true })
  const permissions: CommandSandboxProvider = { commandSandbox: () => ({ kind: 'bubblewrap', bwrap: (status as { path: string }).path, network: false }) }
  root.provide('permissions' as never, permissions as never)
})

afterEach(async () => {
  await root.fiber.dispose()
  for (const name of VARIABLES) {
    if (saved[name] === undefined) delete process.env[name]
    else process.env[name] = saved[name]
  }
  await fs.rm(home, { recursive: true, force: true })
})

async function tool(workspace: string) {
  await root.plugin(workspaceTools, { root: workspace })
  return (name: string, args: unknown): Promise<ToolResult> => root.tools.execute({ id: 'call_1', name, arguments: JSON.stringify(args) }, callContext(workspace))
}

function expectRefused(result: ToolResult, what: 'key' | 'logs') {
  expect(result.ok).toBe(false)
  expect(result.error?.code).toBe('PATH_PROTECTED')
  expect(result.error?.message).toContain(what === 'key' ? 'holds goalkeeper\'s session signing key, which tools cannot read or change' : 'holds goalkeeper\'s session logs, which tools cannot read or change')
  expect(JSON.stringify(result)).not.toContain(key)
}

function expectFailed(result: ToolResult, message: RegExp) {
  expect(result.ok, result.content).toBe(false)
  expect(result.error?.code).toBe('COMMAND_FAILED')
  expect(result.content).toMatch(message)
  expect(JSON.stringify(result)).not.toContain(key)
}

/** The host's key and stores as the test made them: nothing read out, nothing written, nothing added. */
async function expectUntouched() {
  expect((await fs.readFile(keyFile, 'utf8')).trim()).toBe(key)
  expect(await fs.readdir(path.dirname(keyFile))).toEqual(['session.key'])
  expect(await fs.readFile(ownLog.file, 'utf8')).toBe(ownLog.bytes)
  expect(await fs.readFile(otherLog, 'utf8')).toBe('{"type":"session/header"}\n')
  expect((await fs.readdir(sessionsRoot)).sort()).toEqual(['other-0123456789abcdef', path.basename(path.dirname(ownLog.file))].sort())
  expect(await fs.readdir(path.dirname(otherLog))).toEqual(['other.jsonl'])
}

describe('the workspace is the home directory that holds the key and the stores', { timeout: 60_000 }, () => {
  it('the file tools refuse the key, its directory and every store, and say why', async () => {
    const run = await tool(home)
    const ownRelative = path.relative(home, ownLog.file)
    expectRefused(await run('read_file', { path: '.config/goalkeeper/session.key' }), 'key')
    expectRefused(await run('read_file', { path: keyFile }), 'key')
    expectRefused(await run('write_file', { path: '.config/goalkeeper/session.key', content: `${'0'.repeat(64)}\n` }), 'key')
    expectRefused(await run('write_file', { path: '.config/goalkeeper/other.key', content: 'x' }), 'key')
    expectRefused(await run('list_dir', { path: '.config/goalkeeper' }), 'key')
    expectRefused(await run('search', { pattern: '.', path: '.config/goalkeeper' }), 'key')
    expectRefused(await run('read_file', { path: ownRelative }), 'logs')
    expectRefused(await run('edit_file', { path: ownRelative, old_string: 'active', new_string: 'complete' }), 'logs')
    expectRefused(await run('write_file', { path: path.relative(home, otherLog), content: '{"forged":true}\n' }), 'logs')
    expectRefused(await run('write_file', { path: '.local/state/goalkeeper/sessions/new-workspace/forged.jsonl', content: 'x\n' }), 'logs')
    expectRefused(await run('run_command', { command: 'ls', cwd: '.config/goalkeeper' }), 'key')
    expect((await run('read_file', { path: '.config/goalkeeper/session.key' })).error?.message).toBe('".config/goalkeeper/session.key" is inside ".config/goalkeeper", which holds goalkeeper\'s session signing key, which tools cannot read or change. Work on other paths.')
    // Listed by name only, and skipped by search: the key's text is found nowhere.
    const listing = await run('list_dir', { path: '.config', depth: 3 })
    expect(listing.content).toContain('goalkeeper/ (not listed: goalkeeper\'s session signing key)')
    expect((await run('list_dir', { path: '.local/state/goalkeeper', depth: 3 })).content).toContain('sessions/ (not listed: goalkeeper\'s session logs)')
    expect((await run('search', { pattern: key.slice(0, 16) })).content).toContain('No matches')
    await expectUntouched()
  })

  it('a sandboxed command cannot read the key nor write any store, and still writes the rest of the workspace', async () => {
    const run = await tool(home)
    expectFailed(await run('run_command', { command: 'cat .config/goalkeeper/session.key' }), /No such file or directory/)
    expect((await run('run_command', { command: 'ls -A .config/goalkeeper; echo listed' })).content).toMatch(/^listed\n/)
    expectFailed(await run('run_command', { command: 'echo 0000 > .config/goalkeeper/session.key' }), /Read-only file system/)
    expectFailed(await run('run_command', { command: `echo '{"forged":true}' >> ${path.relative(home, otherLog)}` }), /Read-only file system/)
    expectFailed(await run('run_command', { command: `echo '{"forged":true}' >> ${path.relative(home, ownLog.file)}` }), /Read-only file system/)
    expectFailed(await run('run_command', { command: 'mkdir .local/state/goalkeeper/sessions/new-workspace' }), /Read-only file system/)
    expectFailed(await run('run_command', { command: 'mv .local/state/goalkeeper/sessions .local/state/goalkeeper/moved' }), /busy|Read-only|Permission denied|not permitted/i)
    expectFailed(await run('run_command', { command: 'rm -rf .config/goalkeeper/session.key .local/state/goalkeeper/sessions/other-0123456789abcdef' }), /Read-only file system/)
    const made = await run('run_command', { command: 'echo kept > notes.txt && mkdir -p .config/other && echo ok > .config/other/x && cat notes.txt' })
    expect(made).toMatchObject({ ok: true })
    expect(await fs.readFile(path.join(home, 'notes.txt'), 'utf8')).toBe('kept\n')
    expect(await fs.readFile(path.join(home, '.config', 'other', 'x'), 'utf8')).toBe('ok\n')
    await expectUntouched()
  })

  it('the key is masked in whatever a tool returns and in the session, if it ever appears', async () => {
    const run = await tool(home)
    await fs.writeFile(path.join(home, 'copy.txt'), `copied: ${key}\n`)
    const read = await run('read_file', { path: 'copy.txt' })
    expect(read.content).toBe('     1\tcopied: ***')
    const printed = await run('run_command', { command: 'cat copy.txt' })
    expect(printed.content).toContain('copied: ***')
    expect(printed.content).not.toContain(key)
    const opened = await root.sessions.create({ cwd: home })
    opened.append<string>('goal/change', { phase: 'active', note: `the key is ${key}` })
    await root.sessions.flush(opened)
    const bytes = await fs.readFile(opened.file, 'utf8')
    expect(bytes).toContain('the key is ***')
    expect(bytes).not.toContain(key)
  })
})

describe('the key and the stores outside the workspace', { timeout: 60_000 }, () => {
  it('a sandboxed command cannot read the key there either', async () => {
    const workspace = path.join(home, 'project')
    await fs.mkdir(workspace)
    const run = await tool(workspace)
    expectFailed(await run('run_command', { command: `cat ${keyFile}` }), /No such file or directory/)
    // Read-only, or absent where the home directory lies under /tmp (the sandbox's /tmp is private).
    expectFailed(await run('run_command', { command: `echo x > ${path.join(path.dirname(otherLog), 'forged.jsonl')}` }), /Read-only file system|Directory nonexistent/)
    await expectUntouched()
  })
})

describe('the workspace is /', { timeout: 60_000 }, () => {
  it('neither the file tools nor a command read the key or write a store', async () => {
    const run = await tool('/')
    expectRefused(await run('read_file', { path: keyFile }), 'key')
    expectRefused(await run('read_file', { path: keyFile.slice(1) }), 'key')
    expectRefused(await run('write_file', { path: otherLog, content: 'x\n' }), 'logs')
    expectRefused(await run('edit_file', { path: ownLog.file, old_string: 'active', new_string: 'complete' }), 'logs')
    expectRefused(await run('write_file', { path: path.join(sessionsRoot, 'new', 'forged.jsonl'), content: 'x\n' }), 'logs')
    expectFailed(await run('run_command', { command: `cat ${keyFile}` }), /No such file or directory/)
    expectFailed(await run('run_command', { command: `echo x >> ${otherLog}` }), /Read-only file system/)
    expectFailed(await run('run_command', { command: `mkdir ${path.join(sessionsRoot, 'new')}` }), /Read-only file system/)
    // The sandbox's /proc is its own: goalkeeper's environment is not among its processes.
    expect((await run('run_command', { command: 'ls /proc | grep -c "^[0-9]"' })).content).toMatch(/^[1-5]\n/)
    await expectUntouched()
  })
})
