import type { Usage } from '@goalkeeper/session'

/**
 * The one token rule, Codex's: input minus cached input, plus output (reasoning is part of output). A goal's
 * spend and budget count it, and so does every front end that shows a goal's tokens.
 */
export function tokensOf(usage: Usage | undefined): number {
  if (!usage) return 0
  return Math.max(0, usage.inputTokens - (usage.cachedInputTokens ?? 0)) + usage.outputTokens
}
