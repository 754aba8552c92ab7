import type { BlockedReason } from './types.ts'

/** What the model reads for each tool call refused after its round's goal was blocked. */
export function roundStopText(reason: BlockedReason): string {
  return `the goal is blocked (${reason.code}: ${reason.message}); no tool call runs in this round any more.`
}
