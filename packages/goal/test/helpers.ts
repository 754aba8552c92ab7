import { createHarness, type Harness } from '@goalkeeper/test-kit'

export type { Harness }
export { codeOf } from './code-of.ts'

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
