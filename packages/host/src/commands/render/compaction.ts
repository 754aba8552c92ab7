import type { ContextCompactionData } from '@goalkeeper/session'
import { excerpt } from './text.ts'

const WHY: Record<ContextCompactionData['reason'], string> = {
  threshold: 'the request neared the context window',
  overflow: 'the model refused the request as too long',
  request: 'asked for with /compact',
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
