import { clip } from '@goalkeeper/kit'
import { decisionText } from '@goalkeeper/policy'
import type { MistakeFailure, MistakeLimitState } from './types.ts'

// Every text the model or the session sees comes from here (the README quotes them).

const SHOWN_FAILURES = 3
const FAILURE_CHARS = 200

/** One line without its final full stop, since the list adds its own punctuation. */
function oneLine(text: string): string {
  return clip(text.replace(/\s+/g, ' ').trim().replace(/\.+$/, ''), FAILURE_CHARS)
}

function failureList(failures: readonly MistakeFailure[]): string {
  if (!failures.length) return ''
  const shown = failures.slice(-SHOWN_FAILURES).map((f) => `\`${f.tool}\` ${f.code}: ${oneLine(f.message)}`)
  return ` Last errors: ${shown.join('; ')}.`
}

/** What was counted, as one clause. */
function counted(state: MistakeLimitState): string {
  const { failed, size, limit } = state.window
  if (state.cause === 'stale-failures' && state.stale) {
    const { failures, calls, limit: most } = state.stale
    return `${failures} tool calls failed in this turn since the last success that changed anything (${calls} calls in all, `
      + `the others succeeded without bringing anything new; limit ${most})`
  }
  return state.cause === 'failure-window'
    ? `${failed} of the last ${size} steps that called tools failed outright (every tool call in them failed; limit ${limit} of ${size})`
    : `${state.count} consecutive steps in which every tool call failed (limit ${state.limit})`
}

/** The cause as one sentence, shared by the blocked reason and the session message. */
function cause(state: MistakeLimitState): string {
  const text = counted(state)
  return `${text[0].toUpperCase()}${text.slice(1)}.${failureList(state.failures)}`
}

/** The goal's blocked reason message. */
export function blockText(state: MistakeLimitState, reason?: string): string {
  return `${cause(state)}${decisionText(reason)}`
}

/** The plugin message recorded in the session when a run outside a goal is stopped. */
export function stopText(state: MistakeLimitState, reason?: string): string {
  return `Mistake limit stopped this turn: ${counted(state)}.${failureList(state.failures)}${decisionText(reason)}`
    + ' The session is kept; a new message continues from here.'
}

/** Steered when a decision says continue without guidance of its own. */
export function defaultGuidance(state: MistakeLimitState): string {
  if (state.cause === 'stale-failures' && state.stale) {
    return `Mistake limit: ${state.stale.failures} calls failed since anything last changed, and the calls in between brought nothing new.`
      + ' Before the next call, re-read the errors, check what actually exists (list it once), and change the approach instead of guessing again.'
  }
  const failed = state.cause === 'failure-window' ? `${state.window.failed} of the last ${state.window.size} steps` : `the last ${state.count} steps all`
  return `Mistake limit: ${failed} failed. Before the next call, re-read the errors,`
    + ' check the arguments against each tool\'s schema, and try a different approach instead of repeating what failed.'
}
