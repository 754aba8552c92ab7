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
  return usageOfCalls(callsOf(records))
}

/** The usage each model call recorded in `records` reported (answers and compaction summaries), in order. */
export function callsOf(records: readonly SessionRecord[]): Usage[] {
  const calls: Usage[] = []
  for (const record of records) {
    if (isRecordOf(record, 'assistant/message', 'context/compacted') && record.data.usage) calls.push(record.data.usage)
  }
  return calls
}

/** The totals of the usage reports of model calls, or undefined if there are none. */
export function usageOfCalls(calls: readonly Usage[]): UsageTotals | undefined {
  const totals: UsageTotals = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0, calls: 0 }
  const add = (usage: Usage | undefined) => {
    if (!usage) return
    totals.calls++
    totals.inputTokens += usage.inputTokens ?? 0
    totals.cachedInputTokens += usage.cachedInputTokens ?? 0
    totals.outputTokens += usage.outputTokens ?? 0
    totals.reasoningTokens += usage.reasoningTokens ?? 0
  }
  for (const usage of calls) add(usage)
  return totals.calls ? totals : undefined
}

/** `1234 in (1000 cached), 56 out (12 reasoning)`. */
export function describeUsage(usage: UsageTotals): string {
  const cached = usage.cachedInputTokens ? ` (${usage.cachedInputTokens} cached)` : ''
  const reasoning = usage.reasoningTokens ? ` (${usage.reasoningTokens} reasoning)` : ''
  return `${usage.inputTokens} in${cached}, ${usage.outputTokens} out${reasoning}`
}

/** Prices model calls: `ctx.goalBudget.costOf` with the provider's description, as the goal's budget counts them. */
export type CostOfUsage = (usage: Usage | undefined) => number | null

/**
 * What the model calls recorded in `records` cost in US dollars: null when a call has no known price, undefined
 * when nothing prices calls (no goal-budget plugin) or no call was made.
 */
export function costOfRecords(records: readonly SessionRecord[], price: CostOfUsage | undefined): number | null | undefined {
  return costOfCalls(callsOf(records), price)
}

/** `costOfRecords` of the usage reports of model calls. */
export function costOfCalls(calls: readonly Usage[], price: CostOfUsage | undefined): number | null | undefined {
  if (!price || !calls.length) return undefined
  let total: number | null = 0
  for (const usage of calls) {
    const cost = price(usage)
    total = cost === null || total === null ? null : total + cost
  }
  return total
}

/** Money for people: rounded to the cent (`$0.00`; `<$0.01` for a cost that is not zero), or `unknown`. */
export function describeCost(cost: number | null): string {
  if (cost === null) return 'unknown (no price for the model)'
  if (cost > 0 && cost < 0.005) return '<$0.01'
  return `$${cost.toFixed(2)}`
}

/** Input plus output tokens: the one figure of a status line (cached input is part of input, as in the usage lines). */
export function totalTokens(usage: UsageTotals | undefined): number {
  return usage ? usage.inputTokens + usage.outputTokens : 0
}
