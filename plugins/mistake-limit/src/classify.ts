import type { StepSummary } from '@goalkeeper/agent-loop'
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

export function classifyStep(summary: StepSummary, config: MistakeLimitConfig): StepVerdict {
  const failures: MistakeFailure[] = []
  const timeouts: MistakeFailure[] = []
  for (const call of summary.toolCalls) {
    if (call.ok) return { kind: 'success' }
    const code = call.error?.code ?? 'TOOL_FAILED'
    if (config.ignoreErrorCodes.includes(code)) continue
    if (!config.countInvalidCalls && INVALID_CALL_CODES.includes(code)) continue
    const failure = { step: summary.step, tool: call.name, code, message: call.error?.message ?? call.content }
    ;(config.timeoutCodes.includes(code) ? timeouts : failures).push(failure)
  }
  if (failures.length) return { kind: 'mistake', failures }
  return timeouts.length ? { kind: 'timeout', failures: timeouts } : { kind: 'neutral' }
}
