import type { AgentContext, PermissionOption, RequestPermissionResponse } from '@agentclientprotocol/sdk'
import { describeError } from '@goalkeeper/kit'
import type { ToolCallReview, ToolCallVerdict } from '@goalkeeper/tools'
import type { Logger } from 'cordis'
import { viewToolCall } from './tool-view.ts'
import { toolCallId } from './updates.ts'

/**
 * Which calls a person must allow first, besides those the permission modes ask about (`permissions/ask`):
 * for compositions without the permissions plugin, or a host that wants more questions.
 */
export type AskPolicy = (review: ToolCallReview) => boolean

/** `by` of a denial that came from the person at the client (or from the client not answering). */
export const PERMISSION_DENIER = 'acp'

const OPTIONS = (tool: string): PermissionOption[] => [
  { optionId: 'allow_once', name: 'Allow', kind: 'allow_once' },
  { optionId: 'allow_always', name: `Always allow ${tool} in this session`, kind: 'allow_always' },
  { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
  { optionId: 'reject_always', name: `Always reject ${tool} in this session`, kind: 'reject_always' },
]

const deny = (reason: string): ToolCallVerdict => ({ kind: 'deny', by: PERMISSION_DENIER, reason })

/**
 * Asks the client's person, with `session/request_permission`, whether one tool call may run. An answer
 * "always" holds for that tool for the rest of the session in this process (it is never written: like a
 * goal's activation, it is authority a reopened session does not inherit). No answer within `timeoutMs`, a
 * cancelled question or a broken connection deny the call: unattended means deny, as in the CLI.
 */
export class PermissionAsker {
  private always = new Map<string, 'allow' | 'reject'>()

  constructor(
    private client: AgentContext,
    private sessionId: string,
    private cwd: string,
    private timeoutMs: number,
    private logger: Logger,
  ) {}

  /** `always`: allowed for the rest of the session (answered so now, or earlier); `allow`: this call only. */
  async ask(review: ToolCallReview): Promise<ToolCallVerdict | 'allow' | 'always'> {
    const remembered = this.always.get(review.name)
    if (remembered === 'allow') return 'always'
    if (remembered === 'reject') return deny(`the person rejected every ${review.name} call in this session`)
    const argumentsText = JSON.stringify(review.arguments)
    const timeout = AbortSignal.timeout(this.timeoutMs)
    const signal = AbortSignal.any([review.call.signal, timeout])
    let answer: RequestPermissionResponse
    try {
      answer = await this.client.request('session/request_permission', {
        sessionId: this.sessionId,
        toolCall: { toolCallId: toolCallId(review.call.turn, review.call.callId), status: 'pending', ...viewToolCall(review.name, argumentsText, this.cwd, review.tool) },
        options: OPTIONS(review.name),
      }, { cancellationSignal: signal, stopWaitingOnCancel: true })
    } catch (error) {
      if (timeout.aborted) return deny(`nobody answered the permission request in the editor within ${this.timeoutMs >= 1000 ? `${Math.round(this.timeoutMs / 1000)} s` : `${this.timeoutMs} ms`}; unattended calls are denied`)
      if (review.call.signal.aborted) return deny('the turn was cancelled while the person was asked')
      this.logger.warn('session %s: the permission request failed: %s', this.sessionId, describeError(error))
      return deny(`the permission request to the editor failed (${describeError(error)}); calls nobody allowed are denied`)
    }
    if (answer.outcome.outcome !== 'selected') return deny('the person dismissed the permission request')
    switch (answer.outcome.optionId) {
      case 'allow_always':
        this.always.set(review.name, 'allow')
        return 'always'
      case 'allow_once':
        return 'allow'
      case 'reject_always':
        this.always.set(review.name, 'reject')
        return deny(`the person rejected ${review.name} for this session`)
      case 'reject_once':
        return deny('the person rejected this call')
      default:
        return deny(`the editor answered with an option that was not offered ("${answer.outcome.optionId}")`)
    }
  }
}
