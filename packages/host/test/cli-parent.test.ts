// A goalkeeper started under npm (npm start, npx) whose wrapper is killed alone: it must not run on,
// orphaned, with nobody reading its output.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { nodeArgs } from '@goalkeeper/test-kit'
import { CLI_TIMEOUT, childEnv, readSession, repoRoot, sessionIdOf, useProject } from '@goalkeeper/test-kit'

const cli = path.join(repoRoot, 'packages/host/src/cli.ts')
const project = useProject()

/** A stand-in for npm: starts goalkeeper with its own stdio and then only waits. */
function wrapper(args: string[], env: Record<string, string | undefined>) {
  const source = `
    const { spawn } = require('node:child_process')
    spawn(process.execPath, JSON.parse(process.argv[1]), { stdio: 'inherit', cwd: ${JSON.stringify(repoRoot)} })
    setInterval(() => {}, 1 << 30)`
  return spawn(process.execPath, ['-e', source, JSON.stringify([...nodeArgs(cli), ...args])], { env, stdio: ['ignore', 'pipe', 'pipe'] })
}

describe('a goalkeeper whose npm wrapper is killed', { timeout: CLI_TIMEOUT }, () => {
  it('shuts down in order (the goal stays, disarmed) instead of running on as an orphan', async () => {
    const p = await project({
      script: `export default many((request) => {
        if (!turnResults(request).length) return { text: 'Listing.', toolCalls: [{ name: 'list_dir', arguments: {} }] }
        say('hanging in round ' + roundOf(request))
        return { kind: 'hang' }
      })`,
    })
    const child = wrapper([...p.globals, 'goal', 'Tidy the workspace', '--max-rounds', '3'], childEnv({ npm_command: 'exec' }))
    let stderr = ''
    // The pipes close when their last writer, goalkeeper itself, has exited: no polling for its pid.
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()))
    const hanging = new Promise<void>((resolve) =>
      child.stderr.on('data', (chunk) => {
        stderr += chunk
        if (stderr.includes('script: hanging in round 1')) resolve()
      }),
    )
    child.stdout.resume()
    await hanging
    child.kill('SIGKILL')
    await closed
    expect(stderr).toContain('goalkeeper: the parent process ended: shutting down\n')
    const records = await readSession(p, sessionIdOf(stderr))
    expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index))
    expect(records.find((record) => record.type === 'turn/end')?.data.outcome.kind).toBe('aborted')
    expect(records.filter((record) => record.type === 'goal/change').map((record) => record.data.op)).toEqual(['create'])
  })
})
