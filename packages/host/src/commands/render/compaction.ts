import type { ContextCompactionData } from '@goalkeeper/session'
import { excerpt } from './text.ts'

const WHY: Record<ContextCompactionData['reason'], string> = {
  threshold: 'the request neared the context window',
  overflow: 'the model refused the request as too long',
  request: 'asked for with /compact',
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`

/** What a compaction replaced: `18 messages`, `2 tool outputs`, or both. */
const replacedText = (data: ContextCompactionData): string =>
  [data.replaced ? plural(data.replaced, 'message') : '', data.elided?.length ? plural(data.elided.length, 'tool output') : ''].filter(Boolean).join(' and ') || 'nothing'

/** Tokens in thousands with one decimal from 1000 on (`13.3k`, `16k`), as a progress line can afford. */
export const shortTokens = (tokens: number): string =>
  tokens < 1000 ? String(tokens) : `${Number((tokens / 1000).toFixed(1))}k`

/**
 * The progress line of a compaction while it happens:
 * `compacted: 18 messages, ~13.3k -> 5.6k tokens of 16k (summary)`, with why when it was not the threshold.
 */
export function compactionLine(data: ContextCompactionData): string {
  const window = data.contextWindow ? ` of ${shortTokens(data.contextWindow)}` : ''
  const why = data.reason === 'overflow' ? ` after ${WHY.overflow}` : data.reason === 'request' ? ' on request' : ''
  return `compacted: ${replacedText(data)}, ~${shortTokens(data.tokensBefore)} -> ${shortTokens(data.tokensAfter)} tokens${window} (${data.method})${why}`
}

/** A `context/compacted` record for `show`: why and how, what it replaced, the token estimates, and the summary. */
export function describeCompaction(data: ContextCompactionData, full: boolean): string[] {
  const what = [
    data.replaced ? `${data.replaced} message${data.replaced === 1 ? '' : 's'} replaced` : '',
    data.elided?.length ? `${data.elided.length} tool output${data.elided.length === 1 ? '' : 's'} removed` : '',
  ].filter(Boolean).join(', ')
  const window = data.contextWindow ? ` of ${data.contextWindow}` : ''
  const lines = [`  history compacted (${WHY[data.reason] ?? data.reason}; ${data.method}): ${what || 'nothing replaced'}, about ${data.tokensBefore} -> ${data.tokensAfter} tokens${window}`]
  if (data.fallbackReason) lines.push(`    summary not used: ${data.fallbackReason}`)
  const summary = full ? data.summary ?? '' : excerpt(data.summary ?? '', 6, 400)
  if (summary) lines.push(...summary.split('\n').map((line) => `    | ${line}`.trimEnd()))
  return lines
}
