import type { Context } from 'cordis'
import { describeError, dispatchIsolated } from '@goalkeeper/kit'
import type { SandboxStatus } from '@goalkeeper/sandbox'
import type { ToolCallReview, ToolCallVerdict } from '@goalkeeper/tools'
import type { PermissionsConfig } from './config.ts'
import { decide } from './decide.ts'
import { summarize } from './describe.ts'
import type { CompiledRule } from './rules.ts'
import { PERMISSION_RECORD, PERMISSION_WAITING_RECORD, type PermissionAnswer, type PermissionRecord, type PermissionRequest, type PermissionService } from './types.ts'

/** `by` of every denial this plugin makes (the reason says whether a rule, nobody or a person denied). */
export const DENIER = 'permissions'

const deny = (reason: string): ToolCallVerdict => ({ kind: 'deny', by: DENIER, reason })

/** What "always" remembers: the tool, or for run_command the exact command line. */
const memoryKey = (review: ToolCallReview) =>
  review.name === 'run_command' && typeof review.arguments.command === 'string' ? `run_command\0${review.arguments.command}` : review.name

function isAnswer(value: unknown): value is PermissionAnswer {
  const answer = value as PermissionAnswer | undefined
  return !!answer && typeof answer.by === 'string'
    && ((answer.kind === 'allow' && (answer.scope === 'once' || answer.scope === 'session')) || answer.kind === 'deny')
}

/** The decisions of one plugin instance: the mode, the rules, and what people allowed for this process. */
export class PermissionGate {
  /** Per agent object: a resumed session is a new agent and starts with nothing allowed. */
  private allowed = new WeakMap<object, Set<string>>()
  readonly service: PermissionService

  constructor(private ctx: Context, private config: PermissionsConfig, private rules: readonly CompiledRule[], private sandbox: SandboxStatus) {
    const summary = summarize(config.mode, config.network, sandbox)
    this.service = {
      mode: config.mode,
      describe: () => ({ mode: config.mode, network: config.network, sandbox, summary }),
      commandSandbox: () => {
        if (config.mode === 'full') return { kind: 'none' }
        if (!sandbox.available) return { kind: 'unavailable', reason: sandbox.reason }
        return { kind: 'bubblewrap', bwrap: sandbox.path, network: config.network }
      },
    }
  }

  async review(review: ToolCallReview): Promise<ToolCallVerdict> {
    const decision = decide(this.config.mode, this.rules, this.config.classes, review.tool, review.arguments)
    if (decision.kind === 'allow') return { kind: 'allow' }
    if (decision.kind === 'deny') return deny(decision.reason)
    if (this.allowed.get(review.call.agent)?.has(memoryKey(review))) return { kind: 'allow' }
    const request: PermissionRequest = {
      mode: this.config.mode,
      tool: review.name,
      arguments: review.arguments,
      command: review.name === 'run_command' && typeof review.arguments.command === 'string' ? review.arguments.command : undefined,
      why: decision.why,
      review,
      signal: review.call.signal,
    }
    const pending = this.ctx.bail('permissions/ask', request)
    if (!pending) return deny(`${decision.why}, and nobody is there to allow it (an unattended run denies such calls)`)
    this.recordWaiting(request, decision.why)
    dispatchIsolated(this.ctx, 'permissions/waiting', request)
    let answer: PermissionAnswer
    try {
      answer = await pending
    } catch (error) {
      this.ctx.logger.warn('asking about %s failed: %s', review.name, describeError(error))
      return deny(`${decision.why}, and asking a person failed (${describeError(error)})`)
    }
    if (!isAnswer(answer)) return deny(`${decision.why}, and the answer was not understood`)
    this.record(review, decision.why, answer)
    if (answer.kind === 'deny') return deny(answer.reason ?? `${decision.why}, and the person (${answer.by}) said no`)
    if (answer.scope === 'session') {
      const agent = review.call.agent
      if (!this.allowed.has(agent)) this.allowed.set(agent, new Set())
      this.allowed.get(agent)!.add(memoryKey(review))
    }
    return { kind: 'allow' }
  }

  /** The wait goes into the session too, so a reader of the log (the board's overview) sees a call waiting for a person. */
  private recordWaiting(request: PermissionRequest, why: string) {
    const { call } = request.review
    try {
      call.agent.session.append(PERMISSION_WAITING_RECORD, { turn: call.turn, step: call.step, callId: call.callId, tool: request.tool, why, ...(request.command !== undefined ? { command: request.command } : {}) })
    } catch (error) {
      this.ctx.logger.warn('could not record the wait for a permission answer: %s', describeError(error))
    }
  }

  /** A person's answer goes into the session next to the call, so the log shows who allowed what. */
  private record(review: ToolCallReview, why: string, answer: PermissionAnswer) {
    const { call } = review
    const data: PermissionRecord = {
      turn: call.turn,
      step: call.step,
      callId: call.callId,
      tool: review.name,
      why,
      answer: answer.kind === 'deny' ? 'deny' : answer.scope,
      by: answer.by,
    }
    try {
      call.agent.session.append(PERMISSION_RECORD, data)
    } catch (error) {
      this.ctx.logger.warn('could not record the permission answer: %s', describeError(error))
    }
  }
}
