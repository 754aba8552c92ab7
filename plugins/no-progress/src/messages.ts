import { clip } from '@goalkeeper/kit'
import { decisionText } from '@goalkeeper/policy'
import type { ToolKind } from '@goalkeeper/tools'
import type { IdleFinding, IdleRound } from './types.ts'

// Every text the model or the session sees comes from here (the README quotes them).

const QUOTE_CHARS = 80

const quote = (text: string) => `"${clip(text.replace(/\s+/g, ' '), QUOTE_CHARS)}"`
const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`

/** How the messages name a kind of tool: `no successful edit, command or goal update call`. */
const KIND_WORDS: Record<ToolKind, string> = {
  read: 'read',
  search: 'search',
  edit: 'edit',
  execute: 'command',
  session: 'goal update',
  other: 'other tool',
}

/** The words for the configured kinds, then the configured tool name patterns as they are. */
export function kindWords(kinds: readonly ToolKind[], names: readonly string[]): string[] {
  return [...kinds.map((kind) => KIND_WORDS[kind]), ...names]
}

/** `a, b or c`. */
function either(items: readonly string[]): string {
  return items.length > 1 ? `${items.slice(0, -1).join(', ')} or ${items.at(-1)}` : items.join('')
}

function describeRound(round: IdleRound): string {
  const calls = round.calls ? `made ${plural(round.calls, 'tool call')} that changed nothing and found nothing new, then ` : ''
  if (round.stepLimit) return `round ${round.round} ${calls}reached the step limit`
  if (round.redone) return `round ${round.round} redid what each round before it did (the same calls with the same results)`
  return `round ${round.round} ${calls}ended with ${round.text ? `text only: ${quote(round.text)}` : 'an empty reply'}`
}

/** What happened, as one clause. */
export function describe(finding: IdleFinding, progressTools: readonly string[], readTools: readonly string[] = []): string {
  if (finding.kind === 'echo') {
    return `the model said the same thing in ${plural(finding.steps ?? 0, 'step')} in a row (${quote(finding.replies[0] ?? '')}) while `
      + `${plural(finding.calls ?? 0, 'tool call')} found nothing (failures or empty results)`
  }
  if (finding.kind === 'monologue') {
    const { replies } = finding
    const times = `${replies.length} times in a row without calling a tool`
    if (replies.every((r) => !r)) return `the model replied ${times}, with an empty reply each time`
    const same = replies.every((r) => r === replies[0]) ? 'the same text' : 'nearly the same text'
    return `the model replied ${times}, with ${same} each time: ${quote(replies.at(-1)!)}`
  }
  const count = finding.rounds.length
  const reads = readTools.length ? `, and no ${either(readTools)} call that found something new` : ''
  return `${plural(count, 'goal round')} in a row changed nothing (no successful ${either(progressTools)} call${reads}): `
    + finding.rounds.map(describeRound).join('; ')
}

/** The hint in the system prompt of the last goal round allowed (also the guidance of a continue without its own). */
export function hintText(finding: IdleFinding, progressTools: readonly string[], rounds: number, readTools: readonly string[] = []): string {
  if (finding.kind === 'monologue') {
    return `No progress: ${describe(finding, progressTools)}. Do not repeat that reply: call a tool to do the next piece of work, `
      + 'or, if nothing is left to do, say so once and stop.'
  }
  if (finding.kind === 'echo') {
    return `No progress: ${describe(finding, progressTools)}. Another variation of the same attempt will not help: take what the results `
      + 'show as the answer (an empty search means it is not there under that name), try a different approach, or, if it cannot be done, say so and stop.'
  }
  return `No progress: ${describe(finding, progressTools, readTools)}. Do concrete work with tools in this round. If the goal is already reached, `
    + 'verify it and call update_goal with complete; if it cannot be reached, call update_goal with block and say why. '
    + `After ${plural(rounds, 'round')} in a row without progress the goal is blocked.`
}

/** The `policy/escalate` message, also the base of the goal's blocked reason. */
export function escalationText(finding: IdleFinding, progressTools: readonly string[], readTools: readonly string[] = []): string {
  const text = describe(finding, progressTools, readTools)
  return text[0].toUpperCase() + text.slice(1)
}

/** The goal's blocked reason message. */
export function blockText(finding: IdleFinding, progressTools: readonly string[], readTools: readonly string[], reason?: string): string {
  return `${escalationText(finding, progressTools, readTools)}.${decisionText(reason)}`
}

/** The plugin message recorded in the session when a turn outside a goal round is stopped. */
export function stopText(finding: IdleFinding, progressTools: readonly string[], readTools: readonly string[], reason?: string): string {
  return `No-progress guard stopped this turn: ${describe(finding, progressTools, readTools)}.${decisionText(reason)}`
    + ' The session is kept; a new message continues from here.'
}
