import { goalSummaryFold, type GoalSummary } from '@goalkeeper/goal'
import type { SessionService, SessionSummary } from '@goalkeeper/session'
import type { GlobalOptions } from '../../command.ts'
import { recentSessions } from '../lookup/session-id.ts'
import { fitTable, oneLine } from '../render/text.ts'
import { pickLine, type PickerTerminal } from './picker.ts'

/** How many sessions the picker and the `/resume` list offer. */
export const RECENT = 10

/** `just now`, `5m ago`, `3h ago`, `2d ago`: how long since the session was last active. */
export function age(ms: number, now = Date.now()): string {
  const minutes = Math.floor(Math.max(0, now - ms) / 60_000)
  if (minutes < 1) return 'just now'
  if (minutes < 60) return `${minutes}m ago`
  const hours = Math.floor(minutes / 60)
  return hours < 48 ? `${hours}h ago` : `${Math.floor(hours / 24)}d ago`
}

/** The goal's phase as the session's kept summary says it, `-` without a goal. */
function phaseOf(summary: SessionSummary): string {
  const kept = summary.folds?.goal as GoalSummary | undefined
  if (!kept) return '-'
  return 'error' in kept ? 'unreadable' : kept.goal?.phase ?? '-'
}

/** The project's recent sessions, each with its goal's phase. */
export async function recentWithGoals(sessions: SessionService, globals: Pick<GlobalOptions, 'cwd'>): Promise<SessionSummary[]> {
  return (await recentSessions(sessions, globals, { goal: goalSummaryFold })).slice(0, RECENT)
}

/** One line per session (age, goal phase, title; `current` marked), fitted to `width` by shortening titles. */
export function sessionLines(summaries: SessionSummary[], width: number, current?: string): string[] {
  const rows = summaries.map((summary) => {
    const title = oneLine(summary.title ?? '', 200) || '(no message yet)'
    return [age(summary.updatedAt), phaseOf(summary), summary.id === current ? `${title} (this one)` : title]
  })
  return fitTable(rows, width, [{ column: 2, min: 10 }])
}

/**
 * Lets the person at the terminal pick one of the project's recent sessions: its id, or undefined when
 * the picker was cancelled. `summaries` is not empty.
 */
export async function pickSession(terminal: PickerTerminal, summaries: SessionSummary[], current?: string): Promise<string | undefined> {
  // Two columns for the marker of the line picked; one less than the width, so no line wraps.
  const width = (terminal.output.columns || 80) - 3
  const picked = await pickLine(terminal, 'resume which session? (most recent first)', sessionLines(summaries, width, current))
  return picked === undefined ? undefined : summaries[picked].id
}
