import type { Goal } from '@goalkeeper/goal'
import type { SessionSummary } from '@goalkeeper/session'
import { describe, expect, it } from 'vitest'
import { overviewRows, queryOverview } from '../src/overview.ts'

const goal = (over: Partial<Goal>): Goal => ({ id: 'g', objective: 'o', phase: 'active', revision: 1, maxGoalRounds: 5, roundsStarted: 1, createdAt: 0, updatedAt: 0, ...over })
const summary = (id: string, updatedAt: number, folds: SessionSummary['folds'], extra: Partial<SessionSummary> = {}): SessionSummary => ({ id, file: `${id}.jsonl`, createdAt: 0, updatedAt, records: 3, cwd: '/work/p', folds, ...extra })

describe('overview rows and pages', () => {
  const rows = overviewRows([
    summary('a', 5, { goal: { goal: goal({ objective: 'Fix the parser', roundsStarted: 3, spent: { tokens: 900, costUsd: 0.1, activeTimeMs: 10, calls: 3 } }) }, worker: 'w1' }),
    summary('b', 9, { goal: { goal: goal({ objective: 'Deploy', phase: 'blocked', blockedReason: { code: 'needs-key', message: 'no key' } }) } }),
    summary('c', 7, { goal: { goal: null } }),
    summary('d', 3, { goal: { goal: goal({ objective: 'Write docs', phase: 'complete', verification: { attempts: 1, failures: 0, last: { command: 'npm test', ok: true, exitCode: 0 } } }) } }),
    summary('e', 8, undefined, { problem: { code: 'SESSION_TAMPERED', reason: 'line 4 does not verify' } }),
    summary('f', 6, { goal: { error: 'bad goal record' } }),
  ])

  it('keeps goals only, with state, worker and the last verdict; untrusted logs are unreadable with their reason', () => {
    expect(rows.map((row) => [row.session, row.state, row.verdict])).toEqual([
      ['a', 'running', undefined],
      ['b', 'blocked', 'needs-key: no key'],
      ['d', 'complete', 'check passed: npm test'],
      ['e', 'unreadable', 'line 4 does not verify'],
      ['f', 'unreadable', 'bad goal record'],
    ])
    expect(rows[0]).toMatchObject({ worker: 'w1', round: 3, maxRounds: 5, spent: { tokens: 900 } })
  })

  it('pages group by group, filters by words and state, counts per state', () => {
    expect(queryOverview(rows).rows.map((row) => row.session)).toEqual(['a', 'b', 'd', 'e', 'f'])
    expect(queryOverview(rows, { sort: 'objective' }).rows.map((row) => row.session)).toEqual(['a', 'b', 'd', 'e', 'f'])
    const page = queryOverview(rows, { text: 'W1 parser' })
    expect(page.rows.map((row) => row.session)).toEqual(['a'])
    expect(page.counts).toEqual({ running: 1, waiting: 0, blocked: 0, paused: 0, complete: 0, unreadable: 0 })
    expect(queryOverview(rows, { state: 'unreadable' }).rows.map((row) => row.session)).toEqual(['e', 'f'])
    const second = queryOverview(rows, { offset: 2, limit: 2 })
    expect([second.total, second.offset, second.limit, second.rows.map((row) => row.session)]).toEqual([5, 2, 2, ['d', 'e']])
  })

  it('groups an active goal with a call waiting for a person as waiting for approval, after the running ones', () => {
    const waiting = overviewRows([
      summary('w', 2, { goal: { goal: goal({ objective: 'Write files' }) }, approvals: [{ callId: 'c1', tool: 'write_file', why: 'read-only', since: 1 }] }),
      summary('r', 1, { goal: { goal: goal({ objective: 'Read files' }) }, approvals: [] }),
      // A paused goal's leftover wait (its process died asking) does not make it waiting.
      summary('p', 3, { goal: { goal: goal({ objective: 'Paused', phase: 'paused' }) }, approvals: [{ callId: 'c2', tool: 'run_command', why: 'x', since: 1 }] }),
    ])
    expect(waiting.map((row) => [row.session, row.state, row.verdict])).toEqual([
      ['w', 'waiting', 'waiting for approval: write_file'],
      ['r', 'running', undefined],
      ['p', 'paused', undefined],
    ])
    expect(queryOverview(waiting).rows.map((row) => row.session)).toEqual(['r', 'w', 'p'])
  })
})
