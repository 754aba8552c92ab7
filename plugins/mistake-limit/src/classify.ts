import type { StepSummary, ToolCallSummary } from '@goalkeeper/agent-loop'
import type { MistakeLimitConfig } from './config.ts'
import type { MistakeFailure } from './types.ts'

/** Pipeline codes for calls the model itself got wrong. */
export const INVALID_CALL_CODES: readonly string[] = ['INVALID_JSON', 'INVALID_ARGUMENTS', 'UNKNOWN_TOOL']

export type StepVerdict =
  /** At least one tool succeeded: the streak of mistakes is over. */
  | { kind: 'success' }
  /** Tools failed, none succeeded, and at least one failure is the model's. */
  | { kind: 'mistake'; failures: MistakeFailure[] }
  /** Tools failed, none succeeded, and the failures that are not ignored all timed out. */
  | { kind: 'timeout'; failures: MistakeFailure[] }
  /** Nothing that says anything about the model: no tools, or only ignored failures. */
  | { kind: 'neutral' }

/**
 * How a failed call counts: as the model's mistake, as a timeout, or not at all (an infrastructure code, or an
 * invalid call while those are not counted).
 */
export function failureOf(call: ToolCallSummary, step: number, config: MistakeLimitConfig): { kind: 'mistake' | 'timeout'; failure: MistakeFailure } | undefined {
  const code = call.error?.code ?? 'TOOL_FAILED'
  if (config.ignoreErrorCodes.includes(code)) return
  if (!config.countInvalidCalls && INVALID_CALL_CODES.includes(code)) return
  const failure = { step, tool: call.name, code, message: call.error?.message ?? call.content }
  return { kind: config.timeoutCodes.includes(code) ? 'timeout' : 'mistake', failure }
}

export function classifyStep(summary: StepSummary, config: MistakeLimitConfig): StepVerdict {
  const failures: MistakeFailure[] = []
  const timeouts: MistakeFailure[] = []
  for (const call of summary.toolCalls) {
    if (call.ok) return { kind: 'success' }
    const counted = failureOf(call, summary.step, config)
    if (counted) (counted.kind === 'timeout' ? timeouts : failures).push(counted.failure)
  }
  if (failures.length) return { kind: 'mistake', failures }
  return timeouts.length ? { kind: 'timeout', failures: timeouts } : { kind: 'neutral' }
}
