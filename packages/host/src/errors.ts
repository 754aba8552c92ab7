import { describeError } from '@goalkeeper/kit'
import { ExitCode } from './exit-codes.ts'

/**
 * An error meant for the person at the terminal: `message` says what is wrong in one line, `hint` what to
 * do about it. The CLI prints both on one line without a stack trace and exits with `exitCode`.
 */
export class HostError extends Error {
  override name = 'HostError'
  readonly hint: string | undefined
  readonly exitCode: ExitCode
  /** The session the failure is about, when a command resolved one (resume uses it to reach its holder). */
  session?: string

  constructor(message: string, options: { hint?: string; exitCode?: ExitCode; cause?: unknown } = {}) {
    super(message, { cause: options.cause })
    this.hint = options.hint
    this.exitCode = options.exitCode ?? ExitCode.USAGE
  }
}

// A log changed by someone else (tampered, cut short, stripped of its signatures, out of order) is bad input, in every store.
const USAGE_CODES = new Set(['NO_MODEL', 'SESSION_NOT_FOUND', 'SESSION_CORRUPT', 'SESSION_BAD_SEQ', 'SESSION_LOCKED', 'SESSION_TAMPERED', 'SESSION_TRUNCATED', 'SESSION_UNSIGNED', 'SESSION_CONFIG', 'SESSION_KEY_INVALID', 'SESSION_KEY_MISSING', 'AGENT_EXISTS', 'INVALID_OPTIONS'])

const HINTS: Record<string, string> = {
  NO_MODEL: 'load a model provider in cordis.yml',
  // One writer per session: the other process must finish (or be stopped) first; reading never waits.
  SESSION_LOCKED: 'wait for that process to finish, or read the session with show',
  SESSION_TAMPERED: 'read it with show; the lines before the one named are intact',
  SESSION_TRUNCATED: 'read it with show; once you accept that its end is lost, continue it with resume --accept-truncation',
  SESSION_UNSIGNED: 'read it with show; if you know where it comes from, sign it with goalkeeper sessions adopt <id> --yes',
}

/** Errors of the agent and session services are bad input or state: one line, no stack. */
export function asHostError(error: unknown): unknown {
  if (error instanceof HostError) return error
  const code = (error as { code?: unknown })?.code
  if (error instanceof TypeError && /session id/.test(error.message)) return new HostError(error.message, { cause: error })
  if (typeof code !== 'string') return error
  const exitCode = USAGE_CODES.has(code) || code.startsWith('GOAL_') ? ExitCode.USAGE : ExitCode.RUNTIME
  const hint = Object.hasOwn(HINTS, code) ? HINTS[code] : undefined
  return new HostError(describeError(error), { exitCode, hint, cause: error })
}

/** What the CLI says about a failure: what is wrong, what to do about it, and the exit code. */
export interface Failure {
  message: string
  hint: string | undefined
  exitCode: number
}

/** A thrown value as the CLI reports it: a HostError as it is, anything else as an unexpected error (exit 70). */
export function failureOf(error: unknown): Failure {
  if (error instanceof HostError) return { message: error.message, hint: error.hint, exitCode: error.exitCode }
  return { message: `unexpected error: ${describeError(error)}`, hint: 'run with --log-level debug for the stack trace', exitCode: ExitCode.RUNTIME }
}

/**
 * A command line commander refused, from its text (`error: unknown command 'rn'\n(Did you mean run?)`):
 * one line, and a hint with the suggestion that names the right help.
 */
export function usageFailureOf(text: string, help: string): Failure {
  const [first = '', ...rest] = text.replace(/^error: /, '').trim().split('\n')
  // Commander appends an InvalidArgumentError's text after "is invalid. ".
  const message = first.trim().replace(/ is invalid\. /, ' is invalid: ').replace(/\.$/, '')
  const suggestion = /\(Did you mean (.+?)\?\)/.exec(rest.join(' '))?.[1]
  return { message, hint: `${suggestion ? `did you mean ${suggestion}? ` : ''}see ${help}`, exitCode: ExitCode.USAGE }
}

/** The one stderr line of a failure: `goalkeeper: <message> (hint: <hint>)`. */
export function failureLine(failure: Pick<Failure, 'message' | 'hint'>): string {
  return `goalkeeper: ${failure.message}${failure.hint ? ` (hint: ${failure.hint})` : ''}\n`
}

/** The failure as the one JSON line of `--json` output. */
export function failureJson(failure: Failure) {
  return { type: 'error', message: failure.message, hint: failure.hint, exitCode: failure.exitCode }
}
