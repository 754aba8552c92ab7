import { titleOf } from '@goalkeeper/session'

/** Whether the session's title (its first human message) is already in its summary row. */
export interface TitleScan {
  found: boolean
}

// Records start `{"seq":N,"at":T,` (codec.ts): the time of the last line without parsing it whole.
const AT = /^\{"seq":\d+,"at":(-?\d+(?:\.\d+)?)/

/** What a batch of lines changes in the summary row: the last record's time, and the title if it brings one. */
export function lineFacts(lines: readonly string[], title: TitleScan): { updatedAt?: number; title?: string } {
  if (!lines.length) return {}
  const match = AT.exec(lines[lines.length - 1])
  const updatedAt = match ? Number(match[1]) : undefined
  if (title.found) return { updatedAt }
  for (const line of lines) {
    // Only a human message can be the title: skip parsing every other line.
    if (!line.includes('"human"')) continue
    try {
      const found = titleOf(JSON.parse(line))
      if (found !== undefined) return { updatedAt, title: found }
    } catch {
      // Replay reports bad lines; the summary just does not take a title from them.
    }
  }
  return { updatedAt }
}

/** The header fields of a new session's summary row. */
export function headerFacts(firstLine: string): { createdAt: number; cwd: string; parent?: { id: string; seq: number } } {
  const data = JSON.parse(firstLine).data
  return { createdAt: data.createdAt, cwd: data.cwd, ...(data.parent && { parent: data.parent }) }
}
