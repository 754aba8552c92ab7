// The goal page's evidence section in a real browser, against a session written by a real `goal --until
// --verify` run of the CLI with the judge loaded; only the model is scripted (it also answers as the judge,
// told apart by the judge's request carrying no tools).
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, run, sessionIdOf, start, useProject } from '@goalkeeper/test-kit'
import { useBrowser } from './browser.ts'

const project = useProject()
const JUDGE = `- id: goal-judge\n  name: '@goalkeeper/goal-judge'\n`

// Round 1 writes NOTES.md saying draft, round 2 says final; the judge finds it met once the named file says final.
const SCRIPT = `export default many((request) => {
  if (request.tools.length === 0) {
    const met = textOf(request.messages[0]).includes('- NOTES.md\\n<<<\\nfinal')
    return { text: JSON.stringify(met
      ? { verdict: 'met', reasons: ['NOTES.md says final.'], missing: [] }
      : { verdict: 'not-met', reasons: ['NOTES.md says draft.'], missing: ['NOTES.md saying final'] }) }
  }
  const round = roundOf(request)
  if (turnResults(request).length === 0) return { text: 'Writing.', toolCalls: [{ name: 'write_file', arguments: { path: 'NOTES.md', content: round < 2 ? 'draft' : 'final' } }] }
  return { text: 'Wrote NOTES.md.' }
})`

const browser = useBrowser()

describe('the goal page shows what a goal stands on', { timeout: CLI_TIMEOUT }, () => {
  it('the status in the goal package\'s words, the check, and each judgement with its reasons in its round', async () => {
    const p = await project({ script: SCRIPT, extraYml: JUDGE })
    const goal = await run([...p.globals, 'goal', '--until', 'NOTES.md says final', '--verify', 'test -f NOTES.md', '--max-rounds', '3'])
    expect(goal.code, goal.stderr).toBe(0)
    expect(goal.stdout).toContain('Goal complete (verified: 1 check passed; judged met by scripted) after 2/3 rounds')
    const id = sessionIdOf(goal.stderr)

    const board = start([...p.globals, 'board'])
    try {
      await board.waitFor('stdout', /^http:\/\/127\.0\.0\.1:\d+\/\?token=\S+\n/)
      const origin = new URL(board.stdout().trim()).origin
      const context = await browser.newContext()
      const page = await context.newPage()
      await page.goto(board.stdout().trim())
      await page.locator('body[data-ready="overview"]').waitFor()
      await page.goto(`${origin}/goal/${id}`)
      await page.locator('body[data-ready="goal"]').waitFor()
      const evidence = page.locator('section.evidence')
      expect(await evidence.locator('.evidence-status').textContent()).toBe('complete (verified: 1 check passed; judged met by scripted)')
      expect(await evidence.textContent()).toContain('done when: NOTES.md says final')
      expect(await evidence.textContent()).toContain('check: test -f NOTES.md · last run passed, 2 run(s)')
      expect(await evidence.locator('.judgement strong').textContent()).toBe('judge scripted: met, completion accepted')
      const refused = page.locator('section.round[data-round="1"] .judgement')
      expect(await refused.locator('strong').textContent()).toBe('judge scripted: not-met, completion refused')
      expect(await refused.locator('li').allTextContents()).toEqual(['NOTES.md says draft.', 'NOTES.md saying final'])
      // The workspace is not a git work tree: the judge saw no diff, and the page says so.
      expect(await refused.textContent()).toContain('no diff (not a git work tree)')
      expect(await page.locator('section.round[data-round="2"] .judgement strong').textContent()).toBe('judge scripted: met, completion accepted')
      await context.close()
    } finally {
      board.child.kill('SIGTERM')
      await board.exit
    }
  })
})
