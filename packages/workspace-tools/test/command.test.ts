import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ToolResult } from '@goalkeeper/tools'
import { isAlive, setup, waitForFile, type Setup } from './helpers.ts'

let t: Setup
beforeEach(async () => {
  t = await setup({ maxOutputChars: 1000 })
})
afterEach(async () => {
  await t.dispose()
})

/** A command that records the shell's pid and a background child's pid (atomically, via rename), then waits. */
const spawnAndWait = (pids: string, child = 'sleep 60') => `${child} & echo "$$ $!" > "${pids}.tmp" && mv "${pids}.tmp" "${pids}"; wait`

const readPids = async (file: string) => (await waitForFile(file)).trim().split(' ').map(Number)

describe('run_command', () => {
  it('returns the output and the exit code', async () => {
    const result = await t.run('run_command', { command: 'echo out; echo err >&2' })
    expect(result.ok).toBe(true)
    expect(result.content).toMatch(/^out\nerr\n\[Exit code 0 after \d+\.\d s\.\]$/)
  })

  it('reports a non-zero exit as COMMAND_FAILED with the output', async () => {
    const result = await t.run('run_command', { command: 'echo "it broke" >&2; exit 3' })
    expect(result.ok).toBe(false)
    expect(result.error).toEqual({ code: 'COMMAND_FAILED', message: 'The command exited with code 3.' })
    expect(result.content).toMatch(/^it broke\n\[Exit code 3 after/)
  })

  it('runs in the root, or in a cwd inside it', async () => {
    await fs.mkdir(path.join(t.workspace, 'sub'))
    expect((await t.run('run_command', { command: 'pwd' })).content.split('\n')[0]).toBe(t.workspace)
    expect((await t.run('run_command', { command: 'pwd', cwd: 'sub' })).content.split('\n')[0]).toBe(path.join(t.workspace, 'sub'))
    expect((await t.run('run_command', { command: 'pwd', cwd: '..' })).error?.code).toBe('PATH_OUTSIDE_ROOT')
    expect((await t.run('run_command', { command: 'pwd', cwd: 'missing' })).error?.code).toBe('NOT_FOUND')
  })

  it('says when there is no output', async () => {
    expect((await t.run('run_command', { command: 'true' })).content).toMatch(/^\(no output\)\n\[Exit code 0/)
  })

  it('caps long output keeping its head and tail', async () => {
    const result = await t.run('run_command', { command: 'echo START; seq 1 5000; echo END' })
    expect(result.ok).toBe(true)
    expect(result.content.length).toBeLessThan(1200)
    expect(result.content.startsWith('START\n1\n2\n')).toBe(true)
    expect(result.content).toMatch(/\[\.\.\. \d+ characters omitted; output capped at 1000 characters \.\.\.\]/)
    expect(result.content).toMatch(/5000\nEND\n\[Exit code 0/)
  })

  it('kills the whole process group on timeout', async () => {
    const pids = path.join(t.dir, 'pids')
    const result = await t.run('run_command', { command: spawnAndWait(pids), timeout_ms: 500 })
    expect(result.ok).toBe(false)
    expect(result.error?.code).toBe('COMMAND_TIMEOUT')
    expect(result.content).toContain('[Timed out after 500 ms; the command and its child processes were killed.]')
    const [shell, child] = await readPids(pids)
    expect(isAlive(shell)).toBe(false)
    expect(isAlive(child)).toBe(false)
  })

  it('kills children that ignore SIGTERM', async () => {
    const pids = path.join(t.dir, 'pids')
    const result = await t.run('run_command', { command: spawnAndWait(pids, `sh -c "trap '' TERM; sleep 60"`), timeout_ms: 300 })
    expect(result.error?.code).toBe('COMMAND_TIMEOUT')
    const [, child] = await readPids(pids)
    expect(isAlive(child)).toBe(false)
  })

  it('kills the process group when the call is aborted', async () => {
    const pids = path.join(t.dir, 'pids')
    const controller = new AbortController()
    const pending = t.direct('run_command', { command: spawnAndWait(pids) }, controller.signal) as Promise<ToolResult>
    const [shell, child] = await readPids(pids)
    expect(isAlive(child)).toBe(true)
    controller.abort()
    const result = await pending
    expect(result.ok).toBe(false)
    expect(result.error?.code).toBe('ABORTED')
    expect(isAlive(shell)).toBe(false)
    expect(isAlive(child)).toBe(false)
  })

  it('reports ABORTED through the pipeline when aborted', async () => {
    const pids = path.join(t.dir, 'pids')
    const controller = new AbortController()
    const pending = t.run('run_command', { command: spawnAndWait(pids) }, controller.signal)
    const [, child] = await readPids(pids)
    controller.abort()
    expect((await pending).error?.code).toBe('ABORTED')
    // The pipeline answers at once; the tool finishes killing in the background. Its own promise is awaited by unloading.
    await t.root.fiber.dispose()
    expect(isAlive(child)).toBe(false)
  })

  it('does not pass credential-like environment variables to commands', async () => {
    process.env.GK_TEST_API_KEY = 'sk-do-not-leak'
    process.env.GK_TEST_PLAIN = 'visible'
    try {
      const result = await t.run('run_command', { command: 'echo "[$GK_TEST_API_KEY] [$GK_TEST_PLAIN]"' })
      expect(result.content.split('\n')[0]).toBe('[] [visible]')
    } finally {
      delete process.env.GK_TEST_API_KEY
      delete process.env.GK_TEST_PLAIN
    }
  })

  it('has no stdin, so a command waiting for input ends at once', async () => {
    const result = await t.run('run_command', { command: 'cat; echo done' })
    expect(result.content.split('\n')[0]).toBe('done')
  })
})
