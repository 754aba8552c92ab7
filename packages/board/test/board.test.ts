// The board in a real browser (playwright-core driving Chromium) against sessions written by real goal runs of
// the CLI, only the model scripted; the board itself runs as `goalkeeper board`, a child process.
import { createServer } from 'node:http'
import { writeFile, mkdir } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, type Project, run, sessionIdOf, start, useProject } from '@goalkeeper/test-kit'
import { startBoardChild, useBrowser } from './browser.ts'

const project = useProject()
// The README's screenshots are written into the package only when asked (GOALKEEPER_SCREENSHOTS=1), so a test
// run leaves the checkout as it found it; otherwise they go to the project's temp dir and are still taken.
const SCREENSHOTS = process.env.GOALKEEPER_SCREENSHOTS === '1' ? path.resolve(fileURLToPath(import.meta.url), '../../screenshots') : undefined

// BOARD_CASE picks what the scripted model does: `edit` writes and edits a file then completes; `block`
// blocks the goal; `slow` waits for the file go-N before each round's first answer (1000 tokens a call);
// `hostile` answers with markup, a javascript: link, terminal escapes and a huge line.
const SCRIPT = `
const mode = process.env.BOARD_CASE
const usage = { inputTokens: 800, outputTokens: 200 }
export default many(async (request) => {
  const results = turnResults(request)
  const round = roundOf(request)
  if (mode === 'edit') {
    if (round === 1 && !results.length) return { text: 'Writing the notes.', usage, toolCalls: [{ name: 'write_file', arguments: { path: 'NOTES.md', content: 'first line\\nsecond line\\n' } }] }
    if (round === 1 && results.length === 1) return { text: 'Fixing a line.', usage, toolCalls: [{ name: 'edit_file', arguments: { path: 'NOTES.md', old_string: 'second line', new_string: 'second line, edited' } }] }
    if (round === 1) return { text: 'Round one wrote the notes.', usage }
    const step = completeGoal(request)
    return step.toolCalls ? { ...step, usage } : { text: 'The notes are written and edited.', usage }
  }
  if (mode === 'block') {
    const read = results.find((result) => result.name === 'get_goal')
    if (results.some((result) => result.name === 'update_goal')) return { text: 'Blocked: the deploy key is missing.' }
    if (!read) return { toolCalls: [{ name: 'get_goal', arguments: {} }] }
    const goal = JSON.parse(read.content).goal
    return { toolCalls: [{ name: 'update_goal', arguments: { goal_id: goal.goal_id, revision: goal.revision, action: 'block', reason: { code: 'needs-key', message: 'The deploy key is missing.' } } }] }
  }
  if (mode === 'slow') {
    if (results.length) return { text: 'Round ' + round + ' done.', usage }
    say('round ' + round + ' waits')
    await released('go-' + round)
    return { text: 'Round ' + round + ' working.', usage, toolCalls: [{ name: 'list_dir', arguments: {} }] }
  }
  if (mode === 'hostile') {
    if (results.length) {
      const step = completeGoal(request)
      if (step.toolCalls) return step
    }
    const huge = 'x'.repeat(300000)
    const text = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> [click me](javascript:window.__pwned=3) <a href="javascript:window.__pwned=4">link</a> \\u001b[31mred\\u001b[0m\\n' + huge
    if (!results.length) return { text, toolCalls: [{ name: 'write_file', arguments: { path: 'x.html', content: '<script>window.__pwned = 5</script>\\n<iframe src="javascript:1"></iframe>' } }] }
    return { text }
  }
  return { text: 'unknown case ' + mode }
}, 400)
`

async function goal(p: Project, mode: string, args: string[]) {
  const result = await run([...p.globals, 'goal', ...args], { env: { BOARD_CASE: mode } })
  return { ...result, id: sessionIdOf(result.stderr) }
}

const board = (p: Project) => startBoardChild(p)

/** The overview's row of a session, once the page shows it. */
const rowOf = (page: Page, id: string) => page.locator(`tr[data-session="${id}"]`)

const browser = useBrowser()

describe('goalkeeper board in a browser', { timeout: CLI_TIMEOUT }, () => {
  it('lists real goals grouped by state; a goal page shows its rounds, edits as diffs, the answer and the resume command; screenshots', async () => {
    const p = await project({ script: SCRIPT })
    await writeFile(path.join(p.workspace, 'README.md'), '# demo\n')
    const done = await goal(p, 'edit', ['Write the notes', '--max-rounds', '4', '--token-budget', '20000'])
    expect(done.code, done.stderr).toBe(0)
    const blocked = await goal(p, 'block', ['Deploy the site', '--max-rounds', '3'])
    expect(blocked.code, blocked.stderr).toBe(2)
    const { url } = await board(p)
    if (SCREENSHOTS) await mkdir(SCREENSHOTS, { recursive: true })

    for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
      const context = await browser.newContext({ viewport })
      const page = await context.newPage()
      const errors: string[] = []
      page.on('pageerror', (error) => errors.push(error.message))
      await page.goto(url)
      // The token left the address for a cookie.
      expect(new URL(page.url()).search).toBe('')
      await page.locator('body[data-ready="overview"]').waitFor()
      await expect.poll(() => page.locator('#live').textContent()).toBe('live')
      expect(await page.locator('table[data-group="complete"] tr.goal-row').count()).toBe(1)
      expect(await rowOf(page, done.id).locator('.objective a').textContent()).toBe('Write the notes')
      expect(await rowOf(page, done.id).locator('.round').textContent()).toBe('2/4')
      expect(await rowOf(page, done.id).locator('.spend').textContent()).toContain('tokens 6.0k / 20.0k')
      expect(await page.locator('table[data-group="blocked"]').textContent()).toContain('needs-key: The deploy key is missing.')
      expect(await page.locator('h2').allTextContents()).toEqual(['Blocked (1)', 'Complete (1)'])
      await page.screenshot({ path: path.join(SCREENSHOTS ?? p.dir, `overview-${viewport.width}x${viewport.height}.png`) })

      // Filtering is the server's: only the matching goal comes back.
      await page.locator('#filter').fill('deploy')
      await page.locator('table[data-group="complete"]').waitFor({ state: 'detached' })
      expect(await page.locator('tr.goal-row').count()).toBe(1)
      await page.locator('#filter').fill('')
      await page.locator('table[data-group="complete"]').waitFor()

      await rowOf(page, done.id).locator('.objective a').click()
      await page.locator('body[data-ready="goal"]').waitFor()
      expect(await page.locator('h1').textContent()).toBe('Write the notes')
      expect(await page.locator('.answer').textContent()).toBe('The notes are written and edited.')
      const round1 = page.locator('section.round[data-round="1"]')
      expect(await round1.locator('.diff .add').allTextContents()).toEqual(['+ first line', '+ second line', '+ ', '+ second line, edited'])
      expect(await round1.locator('.diff .del').allTextContents()).toEqual(['- second line'])
      expect(await round1.locator('.sub').first().textContent()).toContain('tokens 3.0k')
      expect(await page.locator('pre.command').first().textContent()).toMatch(new RegExp(`goal --session ${done.id}$`))
      await page.screenshot({ path: path.join(SCREENSHOTS ?? p.dir, `goal-${viewport.width}x${viewport.height}.png`), fullPage: false })
      expect(errors).toEqual([])
      await context.close()
    }
  })

  it("a running goal's round counter and spend move live, pushed by the store's changes", async () => {
    const p = await project({ script: SCRIPT })
    const slow = start([...p.globals, 'goal', 'Take your time', '--max-rounds', '3'], { env: { BOARD_CASE: 'slow' } })
    await slow.waitFor('stderr', /script: round 1 waits\n/)
    const id = sessionIdOf(slow.stderr())
    const { url } = await board(p)
    const page = await (await browser.newContext()).newPage()
    let overviewRequests = 0
    page.on('request', (request) => {
      if (request.url().includes('/api/overview')) overviewRequests++
    })
    await page.goto(url)
    await rowOf(page, id).waitFor()
    expect(await page.locator('table[data-group="running"]').count()).toBe(1)
    expect(await rowOf(page, id).locator('.round').textContent()).toBe('1/3')
    expect(await rowOf(page, id).locator('.spend').textContent()).toContain('tokens 0')
    await expect.poll(() => page.locator('#live').textContent()).toBe('live')
    const before = overviewRequests

    await writeFile(path.join(p.dir, 'go-1'), '')
    await slow.waitFor('stderr', /script: round 2 waits\n/)
    await rowOf(page, id).locator('.round', { hasText: '2/3' }).waitFor()
    expect(await rowOf(page, id).locator('.spend').textContent()).toContain('tokens 2.0k')
    // The page reloaded because the server said the store changed, not on a timer of its own.
    expect(overviewRequests).toBeGreaterThan(before)

    await writeFile(path.join(p.dir, 'go-2'), '')
    await writeFile(path.join(p.dir, 'go-3'), '')
    expect(await slow.exited(), slow.stderr()).toBe(4)
    await rowOf(page, id).locator('.round', { hasText: '3/3' }).waitFor()
    await page.locator(`table[data-group="blocked"] tr[data-session="${id}"]`).waitFor()
  })

  it('a hostile transcript renders inert; a wrong token, no token and a cross-origin POST are refused', async () => {
    const p = await project({ script: SCRIPT })
    const hostile = await goal(p, 'hostile', ['<b>bold</b> objective <script>window.__pwned = 6</script>', '--max-rounds', '3'])
    expect(hostile.code, hostile.stderr).toBe(0)
    const { url, origin } = await board(p)
    const context = await browser.newContext()
    const page = await context.newPage()
    const dialogs: string[] = []
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message())
      void dialog.dismiss()
    })
    await page.goto(url)
    await rowOf(page, hostile.id).waitFor()
    expect(await rowOf(page, hostile.id).locator('.objective a').textContent()).toBe('<b>bold</b> objective <script>window.__pwned = 6</script>')
    await rowOf(page, hostile.id).locator('.objective a').click()
    await page.locator('body[data-ready="goal"]').waitFor()
    const text = (await page.locator('section.round[data-round="1"] pre.model-text').textContent())!
    expect(text).toContain('<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">')
    // Terminal escapes are dropped, the words kept; the huge line arrives cut to the page's share.
    expect(text).toContain(' red\n')
    expect(text).not.toContain('\u001b')
    expect(text.length).toBeLessThan(25_000)
    expect(await page.locator('.diff .add').first().textContent()).toBe('+ <script>window.__pwned = 5</script>')
    expect(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined()
    expect(await page.locator('main script, main img, main iframe, a[href^="javascript"]').count()).toBe(0)
    // The only link is the board's own way back.
    expect(await page.locator('main a').count()).toBe(1)
    expect(await page.locator('main a').getAttribute('href')).toBe('/')
    expect(dialogs).toEqual([])

    // No token, or the wrong one: refused, whatever the path.
    const stranger = await browser.newContext()
    const bare = await stranger.newPage()
    expect((await bare.goto(origin))!.status()).toBe(403)
    expect((await bare.goto(`${origin}/api/overview`))!.status()).toBe(403)
    expect((await bare.goto(`${origin}/?token=not-the-token`))!.status()).toBe(403)
    await stranger.close()

    // A page of another origin in the same browser (the board's cookie is there): its POST is refused.
    const evil = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' })
      response.end('<!doctype html><title>elsewhere</title>')
    })
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve))
    try {
      const other = await context.newPage()
      await other.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`)
      // The classic forgery: a form that posts to the board; the browser sends the board's cookie with it.
      const [answer] = await Promise.all([
        other.waitForNavigation(),
        other.evaluate(`(() => {
          const form = document.createElement('form')
          form.method = 'POST'
          form.action = ${JSON.stringify(`${origin}/api/goal/pause`)}
          document.body.appendChild(form)
          form.submit()
        })()`),
      ])
      expect(answer!.request().headers().cookie ?? (await answer!.request().allHeaders()).cookie).toMatch(/goalkeeper_board=/)
      expect(answer!.status()).toBe(403)
      expect(await answer!.text()).toBe('cross-origin request refused\n')
    } finally {
      evil.close()
    }
    // The same POST from the board's own page passes the check (and finds no control there).
    const own = await page.evaluate((target) => fetch(`${target}/api/goal/pause`, { method: 'POST', body: 'x' }).then((response) => response.status), origin)
    expect(own).toBe(404)
    await context.close()
  })

  it('a board beyond loopback needs a token of its own (exit 64); with one, only that token opens it', async () => {
    const p = await project({ script: SCRIPT })
    const bare = await run([...p.globals, 'board', '--host', '0.0.0.0'])
    expect(bare.code).toBe(64)
    expect(bare.stderr).toContain('goalkeeper: board: a board on 0.0.0.0 is reachable from other machines: it needs a token you choose (--token, at least 16 characters)')
    const short = await run([...p.globals, 'board', '--token', 'short'])
    expect(short.code).toBe(64)
    expect(short.stderr).toContain('the token must have at least 16 characters')
    const token = 'a-token-of-my-own-choosing'
    const child = start([...p.globals, 'board', '--token', token])
    await child.waitFor('stdout', /\n$/)
    const url = new URL(child.stdout().trim())
    expect(url.searchParams.get('token')).toBe(token)
    expect((await fetch(new URL('/api/overview', url), { headers: { 'x-board-token': token } })).status).toBe(200)
    expect((await fetch(new URL('/api/overview', url), { headers: { 'x-board-token': `${token}x` } })).status).toBe(403)
  })
})
