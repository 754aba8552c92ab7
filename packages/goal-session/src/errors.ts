/** For logs only: a stack helps there but must never reach a session file. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`
  return String(error)
}

/** For a blocked reason, which is persisted: the message without the stack. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
