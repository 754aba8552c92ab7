import { createHarness, type Harness } from '../../../tests/harness.ts'

export type { Harness }

/** The core harness plus the goal plugin. */
export async function goalHarness(config: Record<string, unknown> = {}): Promise<Harness> {
  const harness = await createHarness({ workspaceTools: false })
  try {
    await harness.load(await import('../src/index.ts'), config)
  } catch (error) {
    await harness.dispose()
    throw error
  }
  return harness
}

/** Error code of a throwing call, or undefined if it did not throw. */
export function codeOf(run: () => unknown): string | undefined {
  try {
    run()
    return undefined
  } catch (error) {
    return (error as { code?: string }).code ?? 'NO_CODE'
  }
}
