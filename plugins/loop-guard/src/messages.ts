import { clip } from '@goalkeeper/kit'
import { decisionText } from '@goalkeeper/policy'
import type { LoopCall, LoopFinding } from './types.ts'

// Every text the model or the session sees comes from here (the README quotes them).

function preview(call: LoopCall, chars: number): string {
  const args = call.arguments
  const cut = clip(args, chars, '')
  const shown = cut.length < args.length ? `${cut}… (${args.length - cut.length} more characters)` : args
  return `\`${call.name}\` ${shown}${call.json ? '' : ' (not valid JSON)'}`
}

function times(count: number): string {
  return count === 1 ? 'once' : `${count} times`
}

/** What happened, as one clause: names the tool, the count and the canonical arguments. */
export function describe(finding: LoopFinding, chars: number): string {
  const [call] = finding.calls
  switch (finding.kind) {
    case 'repeat':
      return `${preview(call, chars)} was called ${times(finding.count)} in a row with `
        + (finding.nearIdentical ? 'nearly the same arguments (only numbers, comments or spacing differed)' : 'the same arguments')
        + (finding.sameResult ? ' and returned the same result each time' : '')
    case 'poll':
      return `${preview(call, chars)} was called ${times(finding.count)} in a row with the same arguments while its result kept changing`
    case 'same-error': {
      const error = finding.error ? `: ${finding.error.code}: ${finding.error.message.replace(/\s+/g, ' ').trim().replace(/\.+$/, '')}` : ''
      return `${preview(call, chars)} failed ${times(finding.count)} with the same error${clip(error, chars)}`
    }
    case 'cycle': {
      const period = finding.calls.length
      return `a cycle of ${period} tool calls (${finding.calls.map((c) => preview(c, chars)).join(' -> ')}) is being repeated with the same results: `
        + `each of the last ${finding.count} calls repeated the call made ${period} calls earlier`
    }
    case 'block': {
      const shown = finding.calls.map((c) => preview(c, chars)).join(' -> ')
      const earlier = finding.count > finding.calls.length ? `, the latest ${finding.calls.length}: ` : ': '
      return `calls already made in this goal are being made again with the same results: each of the last ${finding.count} calls`
        + ` repeated, with the same arguments and the same result, a call made ${times(finding.repetition ?? 2)} before${earlier}${shown}`
    }
  }
}

function advice(finding: LoopFinding): string {
  switch (finding.kind) {
    case 'repeat':
      return (finding.sameResult
        ? 'Repeating it will return the same result again: use the result you already have.'
        : 'Repeating the identical call is not making progress: decide from the results you already have.')
        + ' Do not make this call again. If you need something else, change what you ask for or use a different tool;'
        + ' if the task is finished or cannot be finished, stop calling tools and say so.'
    case 'poll':
      return 'This looks like waiting for something to finish.'
        + (finding.limit ? ` After ${finding.limit} calls in a row the run is stopped.` : '')
        + ' Wait inside one call instead (a command that waits until the job ends, a longer timeout),'
        + ' do other useful work in between, or report the current state and stop calling tools.'
    case 'same-error':
      return 'Retrying the identical call will fail the same way. Read the error and fix its cause'
        + ' (arguments, paths, preconditions) before calling again, or take a different approach.'
    case 'cycle':
      return 'The cycle is not making progress. Do not repeat this sequence: use the results you already have,'
        + ' change the arguments, or take a different step.'
    case 'block':
      return 'Redoing them returns what they returned before, even when those results are no longer in view'
        + ' (the conversation may have been summarised). Do not redo work already done: note what you need from it'
        + ' once, go on with the next step that is not done yet, or, if the task is finished or cannot be finished,'
        + ' stop calling tools and say so.'
  }
}

/** The soft hint steered into the next step. */
export function hintText(finding: LoopFinding, chars: number): string {
  return `Loop guard: ${describe(finding, chars)}. ${advice(finding)}`
}

/** The `policy/escalate` message, also the base of the goal's blocked reason. */
export function escalationText(finding: LoopFinding, chars: number): string {
  const text = describe(finding, chars)
  return text[0].toUpperCase() + text.slice(1)
}

/** The goal's blocked reason message. */
export function blockText(finding: LoopFinding, chars: number, reason?: string): string {
  return `${escalationText(finding, chars)}.${decisionText(reason)}`
}

/** The plugin message recorded in the session when a run outside a goal is stopped. */
export function stopText(finding: LoopFinding, chars: number, reason?: string): string {
  return `Loop guard stopped this turn: ${describe(finding, chars)}.${decisionText(reason)}`
    + ' The session is kept; a new message continues from here.'
}
