import type { Fiber } from 'cordis'

export type EntryStatus = 'loaded' | 'waiting' | 'failed' | 'disabled'

/** The live state of one cordis.yml entry. */
export interface EntryInfo {
  id: string
  kind: 'plugin' | 'group'
  name?: string
  /** Ids of the enclosing groups, outermost first. */
  groups: string[]
  status: EntryStatus
  /** The whole report line, e.g. `entry "agent": config.maxSteps: expected a number, got "x"`. */
  error?: string
  /** For a waiting entry: injected services that nothing provides. */
  waitingFor?: string[]
  fiber?: Fiber
}

export interface ReloadChanges {
  added: string[]
  removed: string[]
  reloaded: string[]
  unchanged: string[]
}

export interface LoadReport {
  /** Absolute path of the cordis.yml. */
  file: string
  /** True when every enabled entry is loaded and the file was read. */
  ok: boolean
  entries: EntryInfo[]
  loaded: string[]
  waiting: string[]
  failed: string[]
  disabled: string[]
  changes: ReloadChanges
  /** Set when the file could not be read or parsed; the running composition was kept. */
  error?: string
}

export function buildReport(file: string, entries: EntryInfo[], changes: ReloadChanges, error?: string): LoadReport {
  const ids = (status: EntryStatus) => entries.filter((entry) => entry.kind === 'plugin' && entry.status === status).map((entry) => entry.id)
  const failed = entries.filter((entry) => entry.status === 'failed').map((entry) => entry.id)
  const report = { file, entries, loaded: ids('loaded'), waiting: ids('waiting'), failed, disabled: ids('disabled'), changes }
  return { ...report, ok: !error && !failed.length && !report.waiting.length, ...(error ? { error } : {}) }
}

/** `4 loaded, 1 waiting, 1 failed, 1 disabled` (zero counts left out). */
export function summarize(report: LoadReport): string {
  const parts = [`${report.loaded.length} loaded`]
  if (report.waiting.length) parts.push(`${report.waiting.length} waiting`)
  if (report.failed.length) parts.push(`${report.failed.length} failed`)
  if (report.disabled.length) parts.push(`${report.disabled.length} disabled`)
  return parts.join(', ')
}

/** `1 reloaded, 1 added, 1 removed, 3 unchanged` (zero counts left out). */
export function summarizeChanges(changes: ReloadChanges): string {
  const parts = (['reloaded', 'added', 'removed', 'unchanged'] as const)
    .filter((kind) => changes[kind].length)
    .map((kind) => `${changes[kind].length} ${kind}`)
  return parts.join(', ') || 'no entries'
}

/** The text form of a report, one entry a line, failures with their reason on the next line. */
export function formatReport(report: LoadReport): string[] {
  const rows = report.entries.map((entry) => {
    const status = entry.kind === 'group' && entry.status === 'loaded' ? 'group' : entry.status
    const id = '  '.repeat(entry.groups.length) + entry.id
    const name = entry.kind === 'group' ? '' : (entry.name ?? '')
    const needs = entry.waitingFor?.length ? ` (needs ${entry.waitingFor.join(', ')})` : ''
    return { status, id, detail: name + needs, error: entry.error }
  })
  // A loop, not Math.max(...rows): spreading 200,000 arguments overflows the stack.
  let width = 0
  for (const row of rows) width = Math.max(width, row.id.length)
  const lines = [`composition ${report.file}`]
  for (const row of rows) {
    lines.push(`  ${row.status.padEnd(9)} ${row.id.padEnd(width)}  ${row.detail}`.trimEnd())
    if (row.error) lines.push(`            ${row.error}`)
  }
  const plugins = report.entries.filter((entry) => entry.kind === 'plugin').length
  lines.push(`${plugins} ${plugins === 1 ? 'entry' : 'entries'}: ${summarize(report)}`)
  return lines
}

/** The JSON form of a report (fibers left out). */
export function reportJson(type: string, report: LoadReport) {
  const entries = report.entries.map(({ fiber: _fiber, ...entry }) => entry)
  return { type, ...report, entries }
}
