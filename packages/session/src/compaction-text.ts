import type { ContextCompactionData } from './records.ts'

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`

/** Tokens in thousands with one decimal from 1000 on (`13.3k`, `16k`), as a one-line note can afford. */
const shortTokens = (tokens: number): string =>
  tokens < 1000 ? String(tokens) : `${Number((tokens / 1000).toFixed(1))}k`

/**
 * One line for people watching a compaction happen (the CLI's progress line, an ACP client's thought):
 * `compacted: 18 messages, ~13.3k -> 5.6k tokens of 16k (summary)`, then why when it was not the threshold
 * (`after the model refused the request as too long`, `on request`).
 */
export function compactionLine(data: ContextCompactionData): string {
  const what = [data.replaced ? plural(data.replaced, 'message') : '', data.elided?.length ? plural(data.elided.length, 'tool output') : '']
    .filter(Boolean).join(' and ') || 'nothing'
  const window = data.contextWindow ? ` of ${shortTokens(data.contextWindow)}` : ''
  const why = data.reason === 'overflow' ? ' after the model refused the request as too long' : data.reason === 'request' ? ' on request' : ''
  return `compacted: ${what}, ~${shortTokens(data.tokensBefore)} -> ${shortTokens(data.tokensAfter)} tokens${window} (${data.method})${why}`
}
