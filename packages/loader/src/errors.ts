/**
 * The cordis.yml as a whole can not be used (unreadable, not YAML, not a list), or the loader was used
 * after `dispose()`. `message` says what is wrong in one line, `hint` what to do about it; a program
 * that embeds the loader shows both (the CLI prints them as one line and exits 64).
 */
export class LoaderError extends Error {
  override name = 'LoaderError'
  readonly hint: string | undefined

  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause })
    this.hint = options.hint
  }
}
