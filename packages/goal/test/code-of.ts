/** Error code of a throwing call, or undefined if it did not throw. */
export function codeOf(run: () => unknown): string | undefined {
  try {
    run()
    return undefined
  } catch (error) {
    return (error as { code?: string }).code ?? 'NO_CODE'
  }
}
