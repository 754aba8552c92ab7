// The board's controls in a real browser (playwright-core driving Chromium) against goals that run in
// `goalkeeper goal` child processes, only the model scripted: the page reaches each through its control socket.
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, type Project, sessionIdOf, start, useProject } from '@goalkeeper/test-kit'
import { startBoardChild, useBrowser } from './browser.ts'

const project = useProject()

// CONTROL_CASE: `slow` waits for the file go-N before each round's first answer (1000 tokens a call);
// `approve` writes a file (which the read-only mode asks about), then completes the goal once it was written.
const SCRIPT = `
const mode = process.env.CONTROL_CASE
const usage = { inputTokens: 800, outputTokens: 200 }
export default many(async (request) => {
  const results = turnResults(request)
  const round = roundOf(request)
  if (mode === 'slow') {
    if (results.length) return { text: 'Round ' + round + ' done.', usage }
    say('round ' + round + ' waits')
    await released('go-' + round)
    return { text: 'Round ' + round + ' working.', usage, toolCalls: [{ name: 'list_dir', arguments: {} }] }
  }
  if (mode === 'approve') {
    const wrote = results.find((result) => result.name === 'write_file')
    if (!wrote) return { text: 'Writing it.', toolCalls: [{ name: 'write_file', arguments: { path: 'APPROVED.md', content: 'approved\\n' } }] }
    if (!wrote.content.includes('denied')) {
      const step = completeGoal(request)
      if (step.toolCalls) return step
      return { text: 'Written and done.' }
    }
    return { text: 'The write was refused: ' + wrote.content }
  }
  return { text: 'unknown case ' + mode }
}, 400)
`

// The control plugin (approvals taken for the board) and read-only permissions, so a write asks a person.
const EXTRA = `- id: permissions
  name: '@goalkeeper/permissions'
  config: { mode: read-only }
- id: control
  name: '@goalkeeper/control'
  config: { approvals: true }
`

async function controlled() {
  const p = await project({ script: SCRIPT, extraYml: EXTRA })
  // Both the goal's process and the board meet in the test's own directory.
  const env = { GOALKEEPER_CONTROL_DIR: path.join(p.dir, 'control') }
  return { p, env }
}

function runGoal(p: Project, env: Record<string, string>, mode: string, args: string[]) {
  return start([...p.globals, 'goal', ...args], { env: { ...env, CONTROL_CASE: mode } })
}

async function goalPage(page: Page, url: string, id: string) {
  await page.goto(url)
  await page.goto(new URL(`/goal/${id}`, url).href)
  await page.locator('body[data-ready="goal"]').waitFor()
}

/** The session's records of one type, read from its log. */
async function recordsOf(p: Project, id: string, type: string) {
  const text = await readFile(path.join(p.sessions, `${id}.jsonl`), 'utf8')
  return text.split('\n').filter(Boolean).map((line) => JSON.parse(line)).filter((record) => record.type === type)
}

const browser = useBrowser()

describe('the board controls goals run by other processes', { timeout: CLI_TIMEOUT }, () => {
  it('pause from the page pauses the goal in the `goal` process (exit 3), recorded with the board as its source; then the page says the process is gone', async () => {
    const { p, env } = await controlled()
    const slow = runGoal(p, env, 'slow', ['Take your time', '--max-rounds', '3'])
    await slow.waitFor('stderr', /script: round 1 waits\n/)
    const id = sessionIdOf(slow.stderr())
    const { url } = await startBoardChild(p, [], env)
    const page = await (await browser.newContext()).newPage()
    await goalPage(page, url, id)
    expect(await page.locator('#controls').textContent()).toContain(`run by process ${slow.child.pid}`)
    await page.locator('button[data-control="pause"]:enabled').click()
    await page.locator('#control-message', { hasText: 'pause: done' }).waitFor()
    await writeFile(path.join(p.dir, 'go-1'), '')
    expect(await slow.exited(), slow.stderr()).toBe(3)
    expect(await recordsOf(p, id, 'control/applied')).toMatchObject([{ data: { action: 'pause', source: 'board' } }])
    expect((await recordsOf(p, id, 'goal/change')).at(-1).data.goal.phase).toBe('paused')

    // The process is gone: the page says so and offers nothing.
    await page.reload()
    await page.locator('body[data-ready="goal"]').waitFor()
    expect(await page.locator('#control-why').textContent()).toContain(`no goalkeeper process on this machine has session ${id} open`)
    expect(await page.locator('button[data-control="resume"]').isDisabled()).toBe(true)
    // A control sent anyway is refused with the same words.
    const sent = await page.evaluate((target) => fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'resume' }) }).then(async (response) => [response.status, await response.json()] as const), new URL(`/api/goal/${id}/control`, url).href)
    expect(sent[0]).toBe(503)
    expect(sent[1]).toMatchObject({ ok: false, code: 'CONTROL_NOT_HELD' })
  })

  it('raising the token budget from the page lets the goal go on past the old budget', async () => {
    const { p, env } = await controlled()
    const slow = runGoal(p, env, 'slow', ['Spend a little', '--max-rounds', '3', '--token-budget', '2500'])
    await slow.waitFor('stderr', /script: round 1 waits\n/)
    const id = sessionIdOf(slow.stderr())
    const { url } = await startBoardChild(p, [], env)
    const page = await (await browser.newContext()).newPage()
    await goalPage(page, url, id)
    // A lower budget is not a raise: refused, and said so.
    await page.locator('#raise-tokens').fill('1000')
    await page.locator('button[data-control="raise"]:enabled').click()
    await page.locator('#control-message', { hasText: "raise refused: budget tokens 1000 does not raise the goal's 2500" }).waitFor()
    await page.locator('#raise-tokens').fill('10000')
    await page.locator('button[data-control="raise"]:enabled').click()
    await page.locator('#control-message', { hasText: 'raise: done' }).waitFor()
    for (const round of [1, 2, 3]) await writeFile(path.join(p.dir, `go-${round}`), '')
    // Three rounds at 2,000 tokens each: past the old 2,500, inside the new 10,000; the round cap ends it.
    expect(await slow.exited(), slow.stderr()).toBe(4)
    const last = (await recordsOf(p, id, 'goal/change')).at(-1).data.goal
    expect(last).toMatchObject({ budgets: { tokens: 10000 }, spent: { tokens: 6000 }, blockedReason: { code: 'round-limit' } })
    expect(await recordsOf(p, id, 'control/applied')).toMatchObject([{ data: { action: 'raise', source: 'board', budgets: { tokens: 10000 } } }])
  })

  it('a call waiting for approval groups its goal as waiting; allowed from the page, the call runs and the goal completes', async () => {
    const { p, env } = await controlled()
    const waiting = runGoal(p, env, 'approve', ['Write the approved file', '--max-rounds', '2'])
    // The board watches the store's directory, which the goal's process creates.
    await waiting.waitFor('stderr', /write_file \{/)
    const { url } = await startBoardChild(p, [], env)
    const page = await (await browser.newContext()).newPage()
    await page.goto(url)
    const row = page.locator('table[data-group="waiting"] tr.goal-row')
    await row.waitFor()
    expect(await page.locator('h2.state-waiting').textContent()).toBe('Waiting for approval (1)')
    expect(await row.textContent()).toContain('waiting for approval: write_file')
    await row.locator('.objective a').click()
    await page.locator('body[data-ready="goal"]').waitFor()
    const approval = page.locator('.approval')
    expect(await approval.textContent()).toContain('write_file')
    expect(await approval.locator('pre').textContent()).toContain('APPROVED.md')
    await approval.locator('button[data-control="allow"]').click()
    expect(await waiting.exited(), waiting.stderr()).toBe(0)
    expect(await readFile(path.join(p.workspace, 'APPROVED.md'), 'utf8')).toBe('approved\n')
    const id = sessionIdOf(waiting.stderr())
    expect(await recordsOf(p, id, 'permission/asked')).toMatchObject([{ data: { tool: 'write_file', answer: 'once', by: 'board' } }])
    expect(await recordsOf(p, id, 'control/applied')).toMatchObject([{ data: { action: 'answer', source: 'board', answer: 'allow' } }])
    // The overview moves it to complete once the store says so.
    await page.goto(url)
    await page.locator(`table[data-group="complete"] tr[data-session="${id}"]`).waitFor()
  })

  it('a control with a wrong token, from another origin, or not as JSON is refused before it reaches the process', async () => {
    const { p, env } = await controlled()
    const slow = runGoal(p, env, 'slow', ['Stay put', '--max-rounds', '2'])
    await slow.waitFor('stderr', /script: round 1 waits\n/)
    const id = sessionIdOf(slow.stderr())
    const { url, origin } = await startBoardChild(p, [], env)
    const token = new URL(url).searchParams.get('token')!
    const target = `${origin}/api/goal/${id}/control`
    const post = (headers: Record<string, string>) => fetch(target, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ action: 'pause' }) })
    expect((await post({ origin, 'x-board-token': `${token}x` })).status).toBe(403)
    expect((await post({ origin })).status).toBe(403)
    expect((await post({ origin: 'http://127.0.0.1:9', 'x-board-token': token })).status).toBe(403)
    expect((await post({ 'x-board-token': token })).status).toBe(403)
    expect((await fetch(target, { method: 'POST', headers: { origin, 'x-board-token': token, 'content-type': 'text/plain' }, body: '{"action":"pause"}' })).status).toBe(415)
    const bad = await fetch(target, { method: 'POST', headers: { origin, 'x-board-token': token, 'content-type': 'application/json' }, body: JSON.stringify({ action: 'explode' }) })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ ok: false, message: 'action must be one of status, pause, resume, raise, clear, answer, not "explode"' })
    // With the token and this origin, the same control goes through: the goal is paused by it, once.
    expect((await post({ origin, 'x-board-token': token })).status).toBe(200)
    await writeFile(path.join(p.dir, 'go-1'), '')
    expect(await slow.exited(), slow.stderr()).toBe(3)
    expect(await recordsOf(p, id, 'control/applied')).toHaveLength(1)
  })
})
