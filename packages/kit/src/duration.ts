const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy

/**
 * `30m`, `1h30m`, `90s`, `2h`, `1.5h` to milliseconds; undefined for anything else (a bare number too: a
 * budget of "30" could mean seconds or minutes, so the unit is required). Shared by the CLI and `/goal`.
 */
export function parseDuration(text: string): number | undefined {
  const value = text.trim().toLowerCase()
  if (!value) return undefined
  PART.lastIndex = 0
  let total = 0
  let match: RegExpExecArray | null
  let end = 0
  while ((match = PART.exec(value))) {
    total += Number(match[1]) * UNIT_MS[match[2]]
    end = PART.lastIndex
  }
  if (end !== value.length || !Number.isFinite(total) || total <= 0) return undefined
  return Math.round(total)
}
