// The host's kept folds over a session held from a checkpoint, in process over a real session stack: the fleet
// worker of its listing entry and the totals chat reads are the whole log's, as a whole read-only replay says.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Context, type Fiber } from 'cordis'
import { describe, expect, it, onTestFinished } from 'vitest'
import type {} from '@goalkeeper/fleet'
import { foldSession, type Session, type SessionService, type SummaryFold } from '@goalkeeper/session'
import { sessionStack } from '@goalkeeper/test-kit'
import { LISTING_FOLDS } from '../src/listing-folds.ts'
import { heldTotals, sessionTotalsFold } from '../src/commands/render/totals.ts'

const totals = sessionTotalsFold(() => undefined)

async function stack(dir: string, kept = true): Promise<SessionService> {
  const root = new Context()
  const fiber: Fiber = await root.plugin(sessionStack, { dir: path.join(dir, 'sessions'), keyFile: path.join(dir, 'session.key'), checkpointEvery: 8 })
  onTestFinished(() => fiber.dispose())
  if (kept) root.sessions.keepFolds({ ...LISTING_FOLDS, totals })
  return root.sessions
}

function turn(sessions: SessionService, session: Session, turn: number) {
  session.append('turn/start', { turn })
  session.append('assistant/message', { turn, step: 1, text: `answer ${turn}`, toolCalls: [], usage: { inputTokens: 100 + turn, outputTokens: turn, cachedInputTokens: 10 } })
  session.append('turn/end', { turn, outcome: { kind: 'completed' } })
  if (sessions.checkpointDue(session)) sessions.checkpoint(session, 'interval')
}

/** A fold over the whole log, read from its first line. */
async function replayed<T>(sessions: SessionService, id: string, fold: SummaryFold<T>): Promise<T> {
  const whole = await sessions.open(id, { readOnly: true })
  expect(whole.firstSeq).toBe(0)
  const run = fold.start()
  for (const record of whole.records) run.add(record)
  await sessions.close(whole)
  return run.result()
}

describe('the host\'s kept folds over a session held from a checkpoint', () => {
  it('name the worker of a claim before the checkpoint, and count every turn and call', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-folds-'))
    onTestFinished(() => fs.rm(dir, { recursive: true, force: true }))
    const sessions = await stack(dir)
    const session = await sessions.create({ cwd: dir })
    session.append('fleet/claim', { worker: 'worker-a', job: 'job-1', attempt: 0, takeover: false, rearmed: false })
    for (let n = 1; n <= 10; n++) {
      turn(sessions, session, n)
      await sessions.flush(session)
    }
    turn(sessions, session, 11)
    // The claim is no longer held: only a carried state still names its worker.
    expect(session.firstSeq).toBeGreaterThan(1)
    const listed = (await sessions.list({ folds: LISTING_FOLDS })).find((summary) => summary.id === session.id)!
    expect(listed.folds?.worker).toBe('worker-a')
    const held = foldSession(session, totals)
    expect(held.from).toBe(0)
    expect(held.result.turns).toBe(11)
    await sessions.close(session)
    expect(await replayed(sessions, session.id, workerFold())).toBe('worker-a')
    expect(await replayed(sessions, session.id, totals)).toEqual(held.result)
    expect(held.result.usage).toEqual({ inputTokens: 1166, cachedInputTokens: 110, cacheWriteInputTokens: 0, outputTokens: 66, reasoningTokens: 0, calls: 11 })

    // Opened again from its last checkpoint: the same, and it goes on.
    const reopened = await sessions.open(session.id)
    expect(reopened.firstSeq).toBeGreaterThan(1)
    turn(sessions, reopened, 12)
    const again = foldSession(reopened, totals).result
    expect((await sessions.list({ folds: LISTING_FOLDS })).find((summary) => summary.id === session.id)!.folds?.worker).toBe('worker-a')
    await sessions.close(reopened)
    expect(await replayed(sessions, session.id, totals)).toEqual(again)
    expect(again.turns).toBe(12)
  })
})

describe('totals of a session whose checkpoints were written before they carried any', () => {
  it('count from the checkpoint it was opened from, say so, and carry that on', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-folds-'))
    onTestFinished(() => fs.rm(dir, { recursive: true, force: true }))
    const before = await stack(dir, false)
    const session = await before.create({ cwd: dir })
    for (let n = 1; n <= 6; n++) turn(before, session, n)
    await before.close(session)
    const sessions = await stack(dir)
    const reopened = await sessions.open(session.id)
    expect(reopened.firstSeq).toBeGreaterThan(0)
    const held = heldTotals(reopened, () => undefined)
    expect(held.from).toBe(reopened.firstSeq)
    expect(held.carried).toBeUndefined()
    // Read whole by a service that does not hold it open.
    const whole = await replayed(before, session.id, totals)
    expect(whole.turns).toBe(6)
    expect(held.totals.turns).toBeLessThan(whole.turns)
    for (let n = 7; n <= 10; n++) turn(sessions, reopened, n)
    const later = heldTotals(reopened, () => undefined)
    expect(later.carried).toBeDefined()
    expect(later.from).toBe(held.from)
    expect(later.totals.turns).toBe(held.totals.turns + 4)
    await sessions.close(reopened)
  })
})

const workerFold = () => LISTING_FOLDS.worker as SummaryFold<string | null>
