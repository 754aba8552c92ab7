import { describeError } from '@goalkeeper/loader'
import { ExitCode } from './exit-codes.ts'

export { describeError }

/**
 * An error meant for the person at the terminal: `message` says what is wrong in one line, `hint` what to
 * do about it. The CLI prints both on one line without a stack trace and exits with `exitCode`.
 */
export class HostError extends Error {
  override name = 'HostError'
  readonly hint: string | undefined
  readonly exitCode: ExitCode

  constructor(message: string, options: { hint?: string; exitCode?: ExitCode; cause?: unknown } = {}) {
    super(message, { cause: options.cause })
    this.hint = options.hint
    this.exitCode = options.exitCode ?? ExitCode.USAGE
  }
}

const USAGE_CODES = new Set(['NO_MODEL', 'SESSION_NOT_FOUND', 'SESSION_CORRUPT', 'AGENT_EXISTS', 'INVALID_OPTIONS'])

/** Errors of the agent and session services are bad input or state: one line, no stack. */
export function asHostError(error: unknown): unknown {
  if (error instanceof HostError) return error
  const code = (error as { code?: unknown })?.code
  if (error instanceof TypeError && /session id/.test(error.message)) return new HostError(error.message, { cause: error })
  if (typeof code !== 'string') return error
  const exitCode = USAGE_CODES.has(code) || code.startsWith('GOAL_') ? ExitCode.USAGE : ExitCode.RUNTIME
  const hint = code === 'NO_MODEL' ? 'load a model provider in cordis.yml' : undefined
  return new HostError(describeError(error), { exitCode, hint, cause: error })
}
