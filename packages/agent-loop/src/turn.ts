import { describeError, dispatchIsolated } from '@goalkeeper/kit'
import type { MessageSource, TurnOutcome, UserMessage } from '@goalkeeper/session'
import type { ModelError, ModelProvider, ToolCall } from '@goalkeeper/model'
import { denial, type ToolResult } from '@goalkeeper/tools'
import type { StepSummary, ToolCallInfo, ToolCallSummary, WrapUpOptions } from './types.ts'
import type { AgentCore } from './state.ts'
import { AgentLoopError } from './errors.ts'
import { buildRequest, withHistory } from './request.ts'
import { readModelStream, type ModelReply } from './stream.ts'
import { compactHistory } from './compaction.ts'

/**
 * The MAX_STEPS message names the setting and how to raise it, so a person who meets it knows what to change.
 * Its first words stay as they were: readers of older logs match on them.
 */
export function maxStepsMessage(maxSteps: number): string {
  return `the turn reached the limit of ${maxSteps} steps (raise it with \`maxSteps\` of the agent-loop entry in cordis.yml, or --max-steps N on the goalkeeper command line)`
}

/**
 * One turn, from `turn/start` to `agent/turn-end` (DESIGN.md section 6): its steps, model calls and tool calls.
 * Its agent opens it, awaits `run`, then in one tick takes the outcome from `finish`, closes it and calls `end`.
 */
export class Turn {
  readonly controller = new AbortController()
  /** Set once by cancel or dispose; the turn ends with this outcome. */
  stopped?: TurnOutcome
  /** Set once by `preempt`: the turn ends with this outcome at its next step boundary, unless stopped first. */
  yielding?: TurnOutcome
  /** Sources of the user messages admitted so far, steered ones included (authority checks). */
  private sources: MessageSource[] = []
  /** Steered messages waiting for the next step. */
  private steered: UserMessage[] = []
  /** The step under way (or the last one run); 0 before the first. */
  private step = 0
  /** Set by `wrapUp`: tool calls from `fromStep` on are refused, and no step after `lastStep` runs. */
  private closing?: { by: string; reason: string; fromStep: number; lastStep: number }

  constructor(private agent: AgentCore, readonly number: number) {}

  /** A steered message joins the next step, or the turn's last records if no step follows. */
  steer(message: UserMessage) {
    this.steered.push(message)
  }

  stop(outcome: TurnOutcome) {
    this.stopped = outcome
    this.controller.abort(new AgentLoopError('ABORTED', `turn ${this.number} ${outcome.kind === 'disposed' ? 'disposed' : 'cancelled'}`))
  }

  /** Ends the turn at the next step boundary; the step under way is not interrupted. */
  preempt(cause: string) {
    this.yielding = { kind: 'preempted', cause }
  }

  /** See `Agent.wrapUp`; a second call keeps the stricter bounds (and the first reason). */
  wrapUp({ by, reason, modelCalls = 0, fromStep }: WrapUpOptions) {
    const bounds = { fromStep: fromStep ?? Math.max(1, this.step), lastStep: this.step + modelCalls }
    const closing = this.closing
    this.closing = closing
      ? { ...closing, fromStep: Math.min(closing.fromStep, bounds.fromStep), lastStep: Math.min(closing.lastStep, bounds.lastStep) }
      : { by, reason, ...bounds }
  }

  /** Records the start and the admitted messages, then runs the steps; resolves with how the steps ended. */
  async run(admitted: UserMessage[]): Promise<TurnOutcome> {
    const { ctx, logger } = this.agent.host
    this.agent.session.append('turn/start', { turn: this.number })
    for (const message of admitted) this.record(message)
    dispatchIsolated(ctx, 'agent/turn-start', this.agent, this.number, admitted)
    // A turn that carries a goal round is on disk (its queued input, `turn/start`, its messages) before its
    // first model call: a process killed during that call leaves a log that knows the round began, so it
    // is never run again under the same number. Human turns are not numbered, and keep their latency. A
    // cancel or preempt that comes meanwhile ends the turn before any model call.
    if (admitted.some((message) => message.source.kind === 'goal')) {
      try {
        await this.agent.host.sessions.flush(this.agent.session)
      } catch (error) {
        return { kind: 'error', code: 'FLUSH_FAILED', message: `the turn's start could not be saved: ${describeError(error)}` }
      }
    }
    try {
      return await this.runSteps()
    } catch (error) {
      logger.error('%s: turn %d failed: %s', this.agent.id, this.number, describeError(error, { stack: true }))
      return { kind: 'error', code: 'INTERNAL', message: describeError(error) }
    }
  }

  /**
   * The outcome the turn ends with. The turn stays open until its agent closes it right after this: a listener
   * from here on may still steer or cancel, so the steered messages are taken and the outcome fixed only after
   * the last listener ran.
   */
  finish(outcome: TurnOutcome): TurnOutcome {
    if (outcome.kind === 'error' && !this.stopped) {
      dispatchIsolated(this.agent.host.ctx, 'agent/error', this.agent, this.number, { code: outcome.code, message: outcome.message })
    }
    // Steered messages that never reached a step still belong to this turn's record.
    while (this.steered.length) this.record(this.steered.shift()!)
    return this.stopped ?? outcome
  }

  /** Writes `turn/end` and emits `agent/turn-end`, once the agent has closed the turn. */
  end(outcome: TurnOutcome) {
    this.agent.session.append('turn/end', { turn: this.number, outcome })
    dispatchIsolated(this.agent.host.ctx, 'agent/turn-end', this.agent, this.number, outcome)
    // After what the turn's end listeners recorded: the next opening reads from here.
    this.agent.checkpointIfDue()
  }

  private record(message: UserMessage) {
    this.agent.session.append('user/message', message)
    this.sources.push(message.source)
  }

  private async runSteps(): Promise<TurnOutcome> {
    const { host, model, settings: { maxSteps } } = this.agent
    for (let step = 1; ; step++) {
      if (this.stopped) return this.stopped
      // The boundary: the previous step (tool calls and step-end listeners included) is over, no model call yet.
      if (this.yielding) return this.yielding
      if (this.closing && step > this.closing.lastStep) {
        // Wound down after a stop: ended the way a policy's cancel ends it, announced the same way.
        this.agent.cancel('policy', { turn: this.number })
        return this.stopped ?? { kind: 'aborted', cause: 'policy' }
      }
      if (step > maxSteps) return { kind: 'error', code: 'MAX_STEPS', message: maxStepsMessage(maxSteps) }
      const provider = host.models.get(model)
      if (!provider) {
        return { kind: 'error', code: 'INTERNAL', message: `model provider "${model}" is not registered` }
      }
      const reply = await this.runStep(step, provider)
      if (this.stopped) return this.stopped
      if (reply.error) {
        const { retryAfterMs } = reply.error
        return { kind: 'error', code: String(reply.error.code), message: reply.error.message, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) }
      }
      if (reply.finish === 'max-tokens') return { kind: 'max-tokens' }
      // Pending steered messages earn one more step, so a hint always reaches the model.
      if (!reply.toolCalls.length && !this.steered.length) return { kind: 'completed' }
    }
  }

  private async runStep(step: number, provider: ModelProvider): Promise<ModelReply> {
    const { agent, number: turn } = this
    const { ctx, logger } = agent.host
    const { session } = agent
    this.step = step
    session.append('step/start', { turn, step })
    let reply: ModelReply
    const calls: ToolCallSummary[] = []
    try {
      for (const message of this.steered.splice(0)) this.record(message)
      reply = await this.callModel(step, provider)
      if (reply.text || reply.toolCalls.length || !reply.aborted) {
        session.append('assistant/message', {
          turn, step, text: reply.text, toolCalls: reply.toolCalls,
          ...(reply.reasoning ? { reasoning: reply.reasoning } : {}),
          ...(reply.reasoningBlocks.length ? { reasoningBlocks: reply.reasoningBlocks } : {}),
          ...(reply.usage ? { usage: reply.usage } : {}),
        })
      }
      const blocked = reply.error || reply.finish === 'max-tokens' ? `the model response ended with ${reply.finish}` : undefined
      for (const call of reply.toolCalls) {
        const skip = this.stopped ? `the turn was ${this.stopped.kind === 'disposed' ? 'disposed' : 'cancelled'}` : blocked
        const closing = this.closing && step >= this.closing.fromStep ? this.closing : undefined
        calls.push(skip ? this.skipCall(step, call, skip) : await this.runCall(step, call, closing && denial(closing.by, closing.reason)))
      }
    } finally {
      session.append('step/end', { turn, step })
    }
    if (!this.stopped) {
      const summary: StepSummary = {
        turn, step, text: reply.text, toolCalls: calls,
        succeeded: calls.filter((call) => call.ok).length,
        failed: calls.filter((call) => !call.ok && call.error?.code !== 'ABORTED').length,
        finish: reply.finish ?? 'error',
        ...(reply.error ? { error: reply.error } : {}),
      }
      try {
        await ctx.parallel('agent/step-end', agent, turn, step, summary)
      } catch (error) {
        const errors = error instanceof AggregateError ? error.errors : [error]
        for (const e of errors) logger.error('listener of agent/step-end failed: %s', describeError(e, { stack: true }))
      }
    }
    return reply
  }

  /**
   * One model call: the history is compacted first when the request would fill too much of the context
   * window. A CONTEXT_OVERFLOW before any output is evidence of the effective limit, whatever the configured
   * window says: the history is compacted under it and the call retried; a second refusal compacts harder
   * (the fallback) and retries once more; a third ends the turn, its message saying what was tried.
   */
  private async callModel(step: number, provider: ModelProvider): Promise<ModelReply> {
    const { agent, number: turn } = this
    const { ctx } = agent.host
    const signal = this.controller.signal
    const scope = { agent, turn, step, provider, signal }
    const deltas = {
      text: (text: string) => dispatchIsolated(ctx, 'agent/text-delta', agent, turn, step, text),
      reasoning: (text: string) => dispatchIsolated(ctx, 'agent/reasoning-delta', agent, turn, step, text),
    }
    let request = buildRequest(agent)
    // Only the messages change: the system prompt's listeners already spoke for this step.
    const ahead = await compactHistory(scope, request, 'threshold')
    if (ahead.kind === 'failed') return failedReply(ahead.error)
    if (ahead.kind === 'compacted') request = withHistory(request, agent.history.snapshot())
    let reply = await readModelStream(provider, request, signal, deltas)
    if (this.stopped || !reply.error) return reply
    if (reply.error.code === 'TRANSPORT' && (reply.text || reply.reasoning) && !reply.toolCalls.length) {
      // The provider retries transport failures only before any output; after some, the call is made
      // once more here, so a dropped connection does not end the turn (or block a goal round).
      agent.session.append('assistant/message', {
        turn, step, text: reply.text, toolCalls: [], ...(reply.reasoning ? { reasoning: reply.reasoning } : {}),
        partial: true, error: { code: reply.error.code, message: reply.error.message },
      })
      agent.host.logger.info('%s: the model stream broke off after output (%s); calling again once', agent.id, reply.error.message)
      return readModelStream(provider, request, signal, deltas)
    }
    const tried: string[] = []
    let refusals = 1
    let window = 0
    for (const fallbackOnly of [false, true]) {
      if (this.stopped || !isRefusal(reply)) return reply
      const compaction = await compactHistory(scope, request, 'overflow', { refusal: reply.error, fallbackOnly })
      if (compaction.kind === 'failed') return failedReply(compaction.error)
      if (compaction.kind === 'unchanged') {
        if (compaction.why === 'aborted') return reply
        tried.push(`the history could not be compacted${tried.length ? ' further' : ''} (${compaction.why})`)
        break
      }
      const { data } = compaction
      window = data.contextWindow ?? window
      tried.push(`compacted (${data.method}) from about ${data.tokensBefore} to ${data.tokensAfter} estimated tokens`)
      request = withHistory(request, agent.history.snapshot())
      reply = await readModelStream(provider, request, signal, deltas)
      if (isRefusal(reply)) refusals++
    }
    if (this.stopped || !isRefusal(reply)) return reply
    const limit = window ? ` (aiming under about ${window} estimated tokens)` : ''
    return failedReply({
      code: 'CONTEXT_OVERFLOW',
      message: `the model refused the request as too long ${refusals === 1 ? 'once' : `${refusals} times`}; ${tried.join(', then ')}${limit}. Last refusal: ${reply.error.message}`,
    })
  }

  /** Runs one tool call, or, given `refused`, records it with that result without running it (a wound-down turn). */
  private async runCall(step: number, call: ToolCall, refused?: ToolResult): Promise<ToolCallSummary> {
    const { agent, number: turn } = this
    const { ctx, tools } = agent.host
    const { session } = agent
    const info: ToolCallInfo = { turn, step, callId: call.id, name: call.name, arguments: call.arguments }
    session.append('tool/call', { ...info })
    dispatchIsolated(ctx, 'agent/tool-start', agent, info)
    let result: ToolResult
    try {
      // Already a normalised result: the tool service turns whatever a tool returns or throws into one.
      result = refused ?? await tools.execute(call, {
        agent, turn, step, signal: this.controller.signal, turnSources: [...this.sources], cwd: session.header.cwd,
      })
    } catch (error) {
      // ctx.tools.execute promises never to throw; a broken pipeline must still not take the loop down.
      result = { ok: false, content: '', error: { code: 'TOOL_FAILED', message: `tool "${call.name}" failed: ${describeError(error)}` } }
    }
    session.append('tool/result', {
      turn, step, callId: call.id, ok: result.ok, content: result.content,
      ...(result.error ? { error: result.error } : {}),
      // Who refused or changed the call: the tool pipeline's `tool/before-call` review, or a wound-down turn.
      ...(result.denied ? { denied: result.denied } : {}),
      ...(result.rewrites?.length ? { rewrites: result.rewrites } : {}),
    })
    dispatchIsolated(ctx, 'agent/tool-end', agent, info, result)
    return { ...info, ...result }
  }

  /** Every `tool/call` gets exactly one `tool/result`, and the model API needs a result for every call it made. */
  private skipCall(step: number, call: ToolCall, why: string): ToolCallSummary {
    const { session } = this.agent
    const turn = this.number
    const info: ToolCallInfo = { turn, step, callId: call.id, name: call.name, arguments: call.arguments }
    const error = { code: 'ABORTED', message: `not run: ${why}` }
    session.append('tool/call', { ...info })
    session.append('tool/result', { turn, step, callId: call.id, ok: false, content: '', error })
    return { ...info, ok: false, content: '', error }
  }
}

/** A refusal as too long before any output: the one failure compaction can answer. */
const isRefusal = (reply: ModelReply): reply is ModelReply & { error: ModelError } =>
  reply.error?.code === 'CONTEXT_OVERFLOW' && !reply.text && !reply.toolCalls.length

/** A model call that ends with `error` and nothing else (the turn ends with it). */
const failedReply = (error: ModelError): ModelReply => ({ text: '', reasoning: '', reasoningBlocks: [], toolCalls: [], error, finish: 'error', aborted: false })
