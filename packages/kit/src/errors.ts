/**
 * Text for any thrown value. By default one line for messages and log lines: an Error's message (its name
 * when the message is empty), anything else as a string, with the lines of a multi-line message joined.
 * `{ stack: true }` gives an Error's stack instead, for log lines only: a stack never belongs in a session
 * file or in text a model reads.
 */
export function describeError(error: unknown, options: { stack?: boolean } = {}): string {
  let text: string
  try {
    text = error instanceof Error ? (options.stack && error.stack) || error.message || error.name : String(error)
  } catch {
    // A null-prototype object or a Proxy that throws on access: nothing readable, and a describer must not throw.
    return 'a thrown value that cannot be shown as text'
  }
  if (options.stack) return text
  return text.split('\n').map((line) => line.trim()).filter(Boolean).join(' ')
}
