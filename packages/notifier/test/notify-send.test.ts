// The example hook script, run as a hook runs it: event JSON on stdin, a notify-send on PATH that records its arguments.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const script = fileURLToPath(new URL('../../../examples/hooks/notify-send.sh', import.meta.url))
let dir = ''
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'gk-notify-send-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

function runHook(stdin: string, pathDirs: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = execFile('bash', [script], { env: { ...process.env, PATH: [...pathDirs, path.dirname(process.execPath), '/usr/bin', '/bin'].join(':') } }, (error) => {
      if (error && typeof error.code !== 'number') reject(error)
      else resolve(typeof error?.code === 'number' ? error.code : 0)
    })
    // The script may exit without reading its input (no notify-send on PATH): a closed pipe is not a failure.
    child.stdin!.on('error', (error: NodeJS.ErrnoException) => void (error.code === 'EPIPE' || reject(error)))
    child.stdin!.end(stdin)
  })
}

async function fakeNotifySend(): Promise<string> {
  const bin = path.join(dir, 'bin')
  await mkdir(bin, { recursive: true })
  await writeFile(path.join(bin, 'notify-send'), `#!/bin/sh\nprintf '%s\\n' "$@" > ${JSON.stringify(path.join(dir, 'shown'))}\n`)
  await chmod(path.join(bin, 'notify-send'), 0o755)
  return bin
}

describe('examples/hooks/notify-send.sh', () => {
  it('shows the goal\'s phase, block code and objective', async () => {
    const bin = await fakeNotifySend()
    const event = { hook_event_name: 'GoalChanged', goal: { phase: 'blocked', objective: 'Make the\ntests pass', blockedReason: { code: 'round-limit' } } }
    expect(await runHook(JSON.stringify(event), [bin])).toBe(0)
    expect(await readFile(path.join(dir, 'shown'), 'utf8')).toBe('--app-name=goalkeeper\ngoalkeeper\nblocked (round-limit): Make the tests pass\n')
  })

  it('shows a Notification\'s message; garbage on stdin still notifies; without notify-send it does nothing and exits 0', async () => {
    const bin = await fakeNotifySend()
    expect(await runHook(JSON.stringify({ hook_event_name: 'Notification', message: 'Claude needs your permission to use Bash' }), [bin])).toBe(0)
    expect(await readFile(path.join(dir, 'shown'), 'utf8')).toContain('Claude needs your permission to use Bash')
    expect(await runHook('not json', [bin])).toBe(0)
    expect(await readFile(path.join(dir, 'shown'), 'utf8')).toBe('--app-name=goalkeeper\ngoalkeeper\nevent\n')
    await rm(path.join(dir, 'shown'))
    expect(await runHook('{}', [path.join(dir, 'empty')])).toBe(0)
    await expect(readFile(path.join(dir, 'shown'), 'utf8')).rejects.toThrow(/ENOENT/)
  })
})
