import { isRecordOf, type SessionRecord, type Usage } from '@goalkeeper/session'

/** Tokens summed over model calls: what the provider reported (calls without a usage report count as nothing). */
export interface UsageTotals {
  inputTokens: number
  cachedInputTokens: number
  outputTokens: number
  reasoningTokens: number
  /** Model calls that reported usage, compaction summaries included. */
  calls: number
}

/** The usage of the model calls recorded in `records` (answers and compaction summaries), or undefined if none reported any. */
export function usageOf(records: readonly SessionRecord[]): UsageTotals | undefined {
  const totals: UsageTotals = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0, calls: 0 }
  const add = (usage: Usage | undefined) => {
    if (!usage) return
    totals.calls++
    totals.inputTokens += usage.inputTokens ?? 0
    totals.cachedInputTokens += usage.cachedInputTokens ?? 0
    totals.outputTokens += usage.outputTokens ?? 0
    totals.reasoningTokens += usage.reasoningTokens ?? 0
  }
  for (const record of records) {
    if (isRecordOf(record, 'assistant/message', 'context/compacted')) add(record.data.usage)
  }
  return totals.calls ? totals : undefined
}

/** `1234 in (1000 cached), 56 out (12 reasoning)`. */
export function describeUsage(usage: UsageTotals): string {
  const cached = usage.cachedInputTokens ? ` (${usage.cachedInputTokens} cached)` : ''
  const reasoning = usage.reasoningTokens ? ` (${usage.reasoningTokens} reasoning)` : ''
  return `${usage.inputTokens} in${cached}, ${usage.outputTokens} out${reasoning}`
}
