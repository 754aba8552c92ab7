// The overview of a store larger than a page, on files and on PostgreSQL: the first pages come from the most
// recent sessions (`recent`), filtered on the server, before the whole listing is ready; the page is told
// when it is, and then counts every goal. The board runs in process (startBoard) over a real session stack.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Context, type Fiber } from 'cordis'
import { describe, expect, it, onTestFinished } from 'vitest'
import type { Goal } from '@goalkeeper/goal'
import { sessionStack, testDatabase } from '@goalkeeper/test-kit'
import { startBoard, type Board } from '../src/index.ts'
import type { OverviewPage } from '../src/overview.ts'

const db = testDatabase()
const COUNT = 30
const PHASES: Goal['phase'][] = ['active', 'paused', 'blocked']

async function stack(store: 'files' | 'postgres', dir: string, clock?: () => number): Promise<Context> {
  const root = new Context()
  const where = store === 'files' ? { dir: path.join(dir, 'sessions') } : { database: db.url }
  const fiber: Fiber = await root.plugin(sessionStack, { ...where, keyFile: path.join(dir, 'session.key'), ...(clock && { clock }) })
  onTestFinished(() => fiber.dispose())
  return root
}

/** `COUNT` sessions with a goal each, the later ones more recent; the goals' session ids, newest first. */
async function goals(ctx: Context, dir: string): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < COUNT; i++) {
    const session = await ctx.sessions.create({ cwd: dir })
    const goal: Goal = { id: `goal-${i}`, objective: `Goal ${i}: part zq${i}x`, phase: 'active', revision: 1, maxGoalRounds: 5, roundsStarted: 0, createdAt: 1, updatedAt: 1 }
    session.append('goal/change', { op: 'create', goal })
    const phase = PHASES[i % PHASES.length]
    if (phase !== 'active') session.append('goal/change', { op: phase === 'paused' ? 'pause' : 'block', goal: { ...goal, phase, revision: 2, ...(phase === 'blocked' ? { blockedReason: { code: 'needs-key', message: 'no key' } } : {}) } })
    await ctx.sessions.close(session)
    ids.unshift(session.id)
  }
  return ids
}

async function page(board: Board, query: string): Promise<OverviewPage> {
  const response = await fetch(`${board.origin}/api/overview?${query}`, { headers: { 'x-board-token': board.token } })
  expect(response.status).toBe(200)
  return (await response.json()) as OverviewPage
}

/** Resolves at the first `change` event of the board's event stream. */
async function nextChange(board: Board): Promise<void> {
  const response = await fetch(`${board.origin}/api/events`, { headers: { 'x-board-token': board.token } })
  const reader = response.body!.getReader()
  let text = ''
  try {
    while (!text.includes('event: change')) {
      const { value, done } = await reader.read()
      if (done) throw new Error('the event stream ended without a change')
      text += Buffer.from(value).toString('utf8')
    }
  } finally {
    await reader.cancel().catch(() => {})
  }
}

describe.each(['files', 'postgres'] as const)('the overview of more sessions than a page (%s)', (store) => {
  it('serves the first pages from the most recent sessions, filtered on the server, then every goal once the listing is ready', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-board-'))
    onTestFinished(() => fs.rm(dir, { recursive: true, force: true }))
    let now = 1_000_000
    const ids = await goals(await stack(store, dir, () => (now += 1000)), dir)
    const ctx = await stack(store, dir)
    const board = await startBoard({ sessions: ctx.sessions })
    onTestFinished(() => board.close())
    const ready = nextChange(board)

    const first = await page(board, 'limit=5')
    expect(first.partial).toBe(true)
    expect(first.rows.map((row) => row.session)).toEqual(ids.slice(0, 5))
    expect(first.total).toBeGreaterThan(5)
    expect(first.total).toBeLessThan(COUNT)
    // The next page continues where it ended, newest first.
    const second = await page(board, 'limit=5&offset=5')
    expect(second.rows.map((row) => row.session)).toEqual(ids.slice(5, 10))
    // A state and words, filtered on the server.
    const blocked = await page(board, 'limit=3&state=blocked')
    expect(blocked.rows.map((row) => row.state)).toEqual(['blocked', 'blocked', 'blocked'])
    expect(blocked.rows.map((row) => row.session)).toEqual(ids.filter((_, i) => (COUNT - 1 - i) % 3 === 2).slice(0, 3))
    const words = await page(board, 'limit=5&text=goal+zq7x')
    expect(words.rows.map((row) => row.session)).toEqual([ids[COUNT - 1 - 7]])

    // The whole listing is ready: the page is told, and then every goal is counted, group by group.
    await ready
    const whole = await page(board, 'limit=5')
    expect(whole.partial).toBeUndefined()
    expect(whole.total).toBe(COUNT)
    expect(whole.counts).toMatchObject({ running: 10, paused: 10, blocked: 10 })
    expect(whole.rows.every((row) => row.state === 'running')).toBe(true)
  })
})
