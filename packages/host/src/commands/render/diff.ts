import type { ToolDiff } from '@goalkeeper/tools'

/** The lines of a diff shown on the terminal; the rest of a long change is counted, not printed. */
export const MAX_DIFF_LINES = 40

/** Above this many lines on a side, the change is shown as all removed and all added (the line match is quadratic). */
const MAX_MATCHED_LINES = 2000

export interface DiffCounts {
  added: number
  removed: number
}

type Op = { kind: ' ' | '-' | '+'; line: string }

const linesOf = (text: string) => (text === '' ? [] : text.replace(/\n$/, '').split('\n'))

/** A line-by-line edit script from `before` to `after`: the longest common subsequence kept, the rest removed or added. */
function editScript(before: string[], after: string[]): Op[] {
  if (before.length > MAX_MATCHED_LINES || after.length > MAX_MATCHED_LINES) {
    return [...before.map((line) => ({ kind: '-' as const, line })), ...after.map((line) => ({ kind: '+' as const, line }))]
  }
  const n = before.length
  const m = after.length
  // common[i][j]: length of the longest common subsequence of before[i..] and after[j..].
  const common = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1))
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) common[i][j] = before[i] === after[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1])
  }
  const ops: Op[] = []
  let i = 0
  let j = 0
  while (i < n || j < m) {
    if (i < n && j < m && before[i] === after[j]) {
      ops.push({ kind: ' ', line: before[i] })
      i++
      j++
      // Removed lines before added ones, as diff(1) shows a replaced line.
    } else if (i < n && (j === m || common[i + 1][j] >= common[i][j + 1])) ops.push({ kind: '-', line: before[i++] })
    else ops.push({ kind: '+', line: after[j++] })
  }
  return ops
}

/** How many lines a change adds and removes. */
export function diffCounts(diff: Pick<ToolDiff, 'oldText' | 'newText'>): DiffCounts {
  const ops = editScript(linesOf(diff.oldText ?? ''), linesOf(diff.newText))
  return { added: ops.filter((op) => op.kind === '+').length, removed: ops.filter((op) => op.kind === '-').length }
}

/** `+3 -1`: the lines a change added and removed. */
export function describeCounts(counts: DiffCounts): string {
  return `+${counts.added} -${counts.removed}`
}

const COLOURS = { '-': '\x1b[31m', '+': '\x1b[32m', '@': '\x1b[36m', header: '\x1b[1m' } as const
const RESET = '\x1b[0m'

/**
 * A change as a unified diff: `---`/`+++` headers (`/dev/null` for a new file) and one hunk. An edit's old and
 * new text are the replaced piece, not the whole file, so the hunk's line numbers count within that piece.
 * At most MAX_DIFF_LINES lines of the hunk are shown; `colour` adds ANSI colours (red removed, green added).
 */
export function unifiedDiff(diff: ToolDiff, colour: boolean): string[] {
  const before = linesOf(diff.oldText ?? '')
  const after = linesOf(diff.newText)
  const ops = editScript(before, after)
  const paint = (code: string, line: string) => (colour ? `${code}${line}${RESET}` : line)
  const range = (start: number, count: number) => (count === 1 ? `${start}` : `${count ? start : 0},${count}`)
  const lines = [
    paint(COLOURS.header, diff.oldText === null ? '--- /dev/null' : `--- a/${diff.path}`),
    paint(COLOURS.header, `+++ b/${diff.path}`),
    paint(COLOURS['@'], `@@ -${range(1, before.length)} +${range(1, after.length)} @@`),
  ]
  for (const op of ops.slice(0, MAX_DIFF_LINES)) {
    const line = `${op.kind}${op.line}`
    lines.push(op.kind === ' ' ? line : paint(COLOURS[op.kind], line))
  }
  if (ops.length > MAX_DIFF_LINES) lines.push(`[… ${ops.length - MAX_DIFF_LINES} more diff lines]`)
  return lines
}
