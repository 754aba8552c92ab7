// The goal page of a session open in the board's own process (an embedding that writes it): a live session
// holds its records from its last checkpoint, and the page says so; the goal, its status and its folder are
// the whole log's, as a whole read-only replay shows them. The board runs in process over a real session stack.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Context, type Fiber } from 'cordis'
import { describe, expect, it, onTestFinished } from 'vitest'
import { type Goal, GoalFold } from '@goalkeeper/goal'
import { sessionStack } from '@goalkeeper/test-kit'
import { goalView, type GoalView, startBoard } from '../src/index.ts'

describe('the goal page of a session its own process holds from a checkpoint', () => {
  it('shows the whole log\'s goal, status and folder, the rounds held, and leaves the session open', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-board-'))
    onTestFinished(() => fs.rm(dir, { recursive: true, force: true }))
    const root = new Context()
    const fiber: Fiber = await root.plugin(sessionStack, { dir: path.join(dir, 'sessions'), keyFile: path.join(dir, 'session.key'), checkpointEvery: 10 })
    onTestFinished(() => fiber.dispose())
    const sessions = root.sessions
    // What the goal plugin contributes to every checkpoint.
    sessions.provideCheckpoint('goal', (session) => {
      const fold = new GoalFold()
      fold.catchUp(session.records)
      return fold.part()
    })
    const session = await sessions.create({ cwd: dir })
    const goal: Goal = { id: 'goal-1', objective: 'Keep the notes short', phase: 'active', revision: 1, maxGoalRounds: 20, roundsStarted: 0, createdAt: 1, updatedAt: 1 }
    session.append('goal/change', { op: 'create', goal })
    for (let turn = 1; turn <= 9; turn++) {
      session.append('turn/start', { turn })
      session.append('assistant/message', { turn, step: 1, text: `answer ${turn}`, toolCalls: [] })
      session.append('turn/end', { turn, outcome: { kind: 'completed' } })
      if (sessions.checkpointDue(session)) sessions.checkpoint(session, 'interval')
      await sessions.flush(session)
    }
    session.append('goal/change', { op: 'pause', goal: { ...goal, phase: 'paused', revision: 2, updatedAt: 2 } })
    expect(session.firstSeq).toBeGreaterThan(0)

    const board = await startBoard({ sessions })
    onTestFinished(() => board.close())
    const response = await fetch(`${board.origin}/api/goal/${session.id}`, { headers: { 'x-board-token': board.token } })
    expect(response.status).toBe(200)
    const { view } = (await response.json()) as { view: GoalView }
    // The page's request did not close the session its process is writing.
    expect(session.closed).toBe(false)
    session.append('turn/start', { turn: 10 })
    await sessions.flush(session)
    await sessions.close(session)

    const whole = await sessions.open(session.id, { readOnly: true })
    expect(whole.firstSeq).toBe(0)
    const replay = goalView(session.id, whole.records)
    await sessions.close(whole)
    expect(replay.rounds).toHaveLength(10)
    expect(view.heldFrom).toBeGreaterThan(0)
    expect(view.cwd).toBe(replay.cwd)
    expect(view.cwd).toBe(dir)
    expect(view.goal).toEqual({ ...replay.goal })
    expect(view.goal?.phase).toBe('paused')
    expect(view.status).toBe(replay.status)
    expect(view.answer).toBe('answer 9')
    // The rounds held are the whole log's last ones (the tenth started after the page was read).
    expect(view.rounds.length).toBeLessThan(9)
    expect(view.rounds).toEqual(replay.rounds.slice(9 - view.rounds.length, 9))
  })
})
