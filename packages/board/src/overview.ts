import type { Goal, GoalSummary } from '@goalkeeper/goal'
import type { WaitingApproval } from '@goalkeeper/permissions'
import type { SessionSummary } from '@goalkeeper/session'

/** The board's groups, in the order the overview shows them; `waiting`: running, a call waits for a person's approval. */
export const STATES = ['running', 'waiting', 'blocked', 'paused', 'complete', 'unreadable'] as const
export type BoardState = (typeof STATES)[number]

/** One goal of the overview, built from a session's kept summary only (no log is read for it). */
export interface OverviewRow {
  session: string
  state: BoardState
  objective: string
  /** The workspace the session ran in. */
  project: string
  worker?: string
  round: number
  maxRounds: number
  spent?: Goal['spent']
  budgets?: Goal['budgets']
  updatedAt: number
  /** The last stop or check verdict: a block's code and message, or the goal check's last run. */
  verdict?: string
  /** Calls waiting for a person's approval, as the log says (the `approvals` fold). */
  waiting?: WaitingApproval[]
}

export interface OverviewQuery {
  state?: BoardState
  /** Words every row shown must contain (objective, project, worker or session id), case-insensitive. */
  text?: string
  sort?: 'updated' | 'round' | 'tokens' | 'objective'
  offset?: number
  limit?: number
}

export interface OverviewPage {
  /** Rows of every state that match `text`, per state: the group headers' counts. */
  counts: Record<BoardState, number>
  /** Rows that match the whole query. */
  total: number
  /**
   * The page was built from the most recent sessions only (the whole listing was not ready): rows newest
   * first, `counts` and `total` of those read so far (at least one more than the page when there are more).
   */
  partial?: boolean
  offset: number
  limit: number
  rows: OverviewRow[]
}

export const PAGE_LIMIT = 50
export const MAX_PAGE_LIMIT = 500

function stateOf(goal: Goal, waiting: readonly WaitingApproval[]): BoardState {
  if (goal.phase !== 'active') return goal.phase
  return waiting.length ? 'waiting' : 'running'
}

function verdictOf(goal: Goal): string | undefined {
  if (goal.blockedReason) return `${goal.blockedReason.code}: ${goal.blockedReason.message}`
  const last = goal.verification?.last
  if (last) return `check ${last.ok ? 'passed' : `failed (exit ${last.exitCode ?? 'none'})`}: ${last.command}`
  return undefined
}

/**
 * The overview's rows from the listing's summaries (their `goal`, `approvals` and `worker` folds): sessions without a goal
 * are left out; a log that cannot be trusted is listed as unreadable with its reason, its goal not shown.
 */
export function overviewRows(summaries: readonly SessionSummary[]): OverviewRow[] {
  const rows: OverviewRow[] = []
  for (const summary of summaries) {
    const worker = typeof summary.folds?.worker === 'string' ? summary.folds.worker : undefined
    const kept = summary.folds?.goal as GoalSummary | undefined
    const waiting = Array.isArray(summary.folds?.approvals) ? (summary.folds.approvals as WaitingApproval[]) : []
    const base = { session: summary.id, project: summary.cwd, updatedAt: summary.updatedAt, ...(worker ? { worker } : {}) }
    const problem = summary.problem?.reason ?? (kept && 'error' in kept ? kept.error : undefined)
    if (problem) {
      rows.push({ ...base, state: 'unreadable', objective: summary.title ?? '', round: 0, maxRounds: 0, verdict: problem })
      continue
    }
    const goal = kept && 'goal' in kept ? kept.goal : null
    if (!goal) continue
    const state = stateOf(goal, waiting)
    const verdict = state === 'waiting' ? `waiting for approval: ${waiting.map((wait) => wait.tool).join(', ')}` : verdictOf(goal)
    rows.push({
      ...base,
      state,
      objective: goal.objective,
      round: goal.roundsStarted,
      maxRounds: goal.maxGoalRounds,
      ...(goal.spent ? { spent: goal.spent } : {}),
      ...(goal.budgets ? { budgets: goal.budgets } : {}),
      ...(verdict ? { verdict } : {}),
      ...(state === 'waiting' ? { waiting } : {}),
    })
  }
  return rows
}

const SORTS: Record<NonNullable<OverviewQuery['sort']>, (a: OverviewRow, b: OverviewRow) => number> = {
  updated: (a, b) => b.updatedAt - a.updatedAt,
  round: (a, b) => b.round - a.round || b.updatedAt - a.updatedAt,
  tokens: (a, b) => (b.spent?.tokens ?? 0) - (a.spent?.tokens ?? 0) || b.updatedAt - a.updatedAt,
  objective: (a, b) => a.objective.localeCompare(b.objective) || b.updatedAt - a.updatedAt,
}

/**
 * One page of the overview: filtered, counted per state and sorted here, so the page gets only what it
 * shows. `grouped: false` keeps the rows' order (newest first, for rows of the most recent sessions only)
 * instead of paging group by group.
 */
export function queryOverview(rows: readonly OverviewRow[], query: OverviewQuery = {}, grouped = true): OverviewPage {
  const words = (query.text ?? '').toLowerCase().split(/\s+/).filter(Boolean)
  const matching = words.length
    ? rows.filter((row) => {
        const text = `${row.objective}\n${row.project}\n${row.worker ?? ''}\n${row.session}`.toLowerCase()
        return words.every((word) => text.includes(word))
      })
    : rows
  const counts = Object.fromEntries(STATES.map((state) => [state, 0])) as Record<BoardState, number>
  for (const row of matching) counts[row.state]++
  const chosen = query.state ? matching.filter((row) => row.state === query.state) : matching
  const offset = Math.max(0, query.offset ?? 0)
  const limit = Math.min(MAX_PAGE_LIMIT, Math.max(1, query.limit ?? PAGE_LIMIT))
  // Pages run group by group (running first), each group in the order asked for.
  const order = SORTS[query.sort ?? 'updated'] ?? SORTS.updated
  const sorted = grouped ? [...chosen].sort((a, b) => STATES.indexOf(a.state) - STATES.indexOf(b.state) || order(a, b)) : chosen
  return { counts, total: chosen.length, offset, limit, rows: sorted.slice(offset, offset + limit) }
}
