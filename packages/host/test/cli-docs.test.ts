// What the documentation promises about the CLI's output. Every exit code the CLI can return is
// documented in the three places people look: the README's table, the top-level --help and the agent
// commands' --help (a code added to ExitCode without its row fails here); and where two token figures
// disagree (cached input), the output says which rule each follows.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ExitCode } from '@goalkeeper/host'
import { CLI_TIMEOUT, repoRoot, run, useProject } from '@goalkeeper/test-kit'

const project = useProject()
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

describe('the token rule', () => {
  const TOKEN_RULE = "goalkeeper: tokens used counts every input token; the goal's spend and token budget count input not read from the cache, plus output\n"
  const script = (cached: number) => `export default many((request) => {
  if (roundOf(request) >= 2) return completeGoal(request)
  return { text: 'Working.', usage: { inputTokens: 450, cachedInputTokens: ${cached}, outputTokens: 100 } }
})`

  it('a goal whose input was partly cached: the usage line, the spend, and the line that explains the difference', async () => {
    const p = await project({ script: script(50) })
    const result = await run([...p.globals, 'goal', 'Write the report', '--token-budget', '5000'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain('goalkeeper: tokens used: 450 in (50 cached), 100 out in')
    expect(result.stdout).toContain('Spent: tokens 500/5k')
    expect(result.stderr).toContain(TOKEN_RULE)
  }, CLI_TIMEOUT)

  it('no cached input, no difference: no explanation', async () => {
    const p = await project({ script: script(0) })
    const result = await run([...p.globals, 'goal', 'Write the report', '--token-budget', '5000'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain('Spent: tokens 550/5k')
    expect(result.stderr).not.toContain('tokens used counts every input token')
  }, CLI_TIMEOUT)
})
