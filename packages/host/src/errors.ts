import { ExitCode } from './exit-codes.ts'

export { describeError } from '@goalkeeper/loader'

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

