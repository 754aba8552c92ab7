import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { nodeArgs } from '../src/index.ts'

const repoRoot = path.resolve(fileURLToPath(import.meta.url), '../../../..')
const cli = 'packages/host/src/cli.ts'

afterEach(() => {
  vi.unstubAllEnvs()
})

describe('child programs of a test run', () => {
  it('start the CLI from the bundle the run built, which finds its package files as the source does', async () => {
    const args = nodeArgs(path.join(repoRoot, cli))
    expect(args).toEqual([expect.stringMatching(/\/packages\/host\/\.test-build\/cli-\d+\.mjs$/)])
    expect(existsSync(args[0])).toBe(true)
    expect(nodeArgs(cli)).toEqual(args)
    // `--version` reads ../package.json from the module's own URL: the bundle must sit where src/ does.
    const { stdout } = await promisify(execFile)(process.execPath, [...args, '--version'], { cwd: repoRoot })
    expect(stdout.trim()).toBe(JSON.parse(readFileSync(path.join(repoRoot, 'packages/host/package.json'), 'utf8')).version)
  })

  it('run from source through tsx when asked, and for a program the run did not bundle', () => {
    expect(nodeArgs('packages/session-postgres/test/fixtures/batch-child.ts')).toEqual(['--import', 'tsx', path.join(repoRoot, 'packages/session-postgres/test/fixtures/batch-child.ts')])
    vi.stubEnv('GOALKEEPER_TEST_SOURCE', '1')
    expect(nodeArgs(cli)).toEqual(['--import', 'tsx', path.join(repoRoot, cli)])
  })
})
