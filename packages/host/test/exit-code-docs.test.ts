// Every exit code the CLI can return is documented in the three places people look: the README's table,
// the top-level --help and the agent commands' --help. A code added to ExitCode without its row fails here.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ExitCode } from '@goalkeeper/host'
import { CLI_TIMEOUT, repoRoot, run } from '@goalkeeper/test-kit'

const codes = [...new Set(Object.values(ExitCode))].sort((a, b) => a - b)

describe('the exit codes, documented', () => {
  it("the README's table has one row per code, in order", async () => {
    const readme = await readFile(path.join(repoRoot, 'README.md'), 'utf8')
    const table = readme.slice(readme.indexOf('### Exit codes'))
    const rows = [...table.matchAll(/^\| (\d+) \| (.+) \|$/gm)].map((match) => Number(match[1]))
    expect(rows).toEqual(codes)
  })

  it('the top-level --help names every code, and goal --help explains every code', async () => {
    const [top, goal] = await Promise.all([run(['--help']), run(['goal', '--help'])])
    expect(top.code).toBe(0)
    const summary = top.stdout.slice(top.stdout.indexOf('Exit codes:')).replace(/\s+/g, ' ')
    const named = [...summary.matchAll(/(?:^Exit codes: |, )(\d+) /g)].map((match) => Number(match[1]))
    expect(named).toEqual(codes)
    const explained = [...goal.stdout.slice(goal.stdout.indexOf('Exit codes:')).matchAll(/^ {2}(\d+) +\S/gm)].map((match) => Number(match[1]))
    expect(explained).toEqual(codes)
  }, CLI_TIMEOUT)
})
