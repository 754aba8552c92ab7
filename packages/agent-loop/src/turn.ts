import { dispatchIsolated } from '@goalkeeper/session'
import type { TurnOutcome, UserMessage } from '@goalkeeper/session'
import type { ModelProvider, ToolCall } from '@goalkeeper/model'
import type { ToolResult } from '@goalkeeper/tools'
import type { StepSummary, ToolCallInfo, ToolCallSummary } from './types.ts'
import type { LoopAgent } from './agent.ts'
import type { TurnState } from './state.ts'
import { describe } from './errors.ts'
import { buildRequest } from './request.ts'
import { readModelStream, type ModelReply } from './stream.ts'

/**
 * Runs one turn from `turn/start` to `agent/turn-end` (DESIGN.md section 6). The caller flushes afterwards.
 * Returns the turn number.
 */
export async function runTurn(agent: LoopAgent, admitted: UserMessage[]): Promise<number> {
  const { ctx, logger } = agent.host
  const state = agent.openTurn()
  const { turn } = state
  agent.session.append('turn/start', { turn })
  for (const message of admitted) agent.recordUserMessage(state, message)
  dispatchIsolated(ctx, 'agent/turn-start', agent, turn, admitted)

  let outcome: TurnOutcome
  try {
    outcome = await runSteps(agent, state)
  } catch (error) {
    logger.error('%s: turn %d failed: %s', agent.id, turn, (error as Error)?.stack ?? error)
    outcome = { kind: 'error', code: 'INTERNAL', message: describe(error) }
  }
  // The turn stays open until `closeTurn`: a listener from here on may still steer or cancel, so the
  // steered messages are taken and the outcome fixed only after the last listener ran.
  if (outcome.kind === 'error' && !state.stop) {
    dispatchIsolated(ctx, 'agent/error', agent, turn, { code: outcome.code, message: outcome.message })
  }
  // Steered messages that never reached a step still belong to this turn's record.
  while (state.steered.length) agent.recordUserMessage(state, state.steered.shift()!)
  outcome = state.stop ?? outcome
  agent.closeTurn(state)
  agent.session.append('turn/end', { turn, outcome })
  dispatchIsolated(ctx, 'agent/turn-end', agent, turn, outcome)
  return turn
}

async function runSteps(agent: LoopAgent, state: TurnState): Promise<TurnOutcome> {
  const { maxSteps } = agent.settings
  for (let step = 1; ; step++) {
    if (state.stop) return state.stop
    if (step > maxSteps) {
      return { kind: 'error', code: 'MAX_STEPS', message: `the turn reached the limit of ${maxSteps} steps` }
    }
    const provider = agent.host.models.get(agent.model)
    if (!provider) {
      return { kind: 'error', code: 'INTERNAL', message: `model provider "${agent.model}" is not registered` }
    }
    const reply = await runStep(agent, state, step, provider)
    if (state.stop) return state.stop
    if (reply.error) return { kind: 'error', code: String(reply.error.code), message: reply.error.message }
    if (reply.finish === 'max-tokens') return { kind: 'max-tokens' }
    // Pending steered messages earn one more step, so a hint always reaches the model.
    if (!reply.toolCalls.length && !state.steered.length) return { kind: 'completed' }
  }
}

async function runStep(agent: LoopAgent, state: TurnState, step: number, provider: ModelProvider): Promise<ModelReply> {
  const { ctx, logger } = agent.host
  const { session } = agent
  const { turn } = state
  session.append('step/start', { turn, step })
  let reply: ModelReply
  const calls: ToolCallSummary[] = []
  try {
    for (const message of state.steered.splice(0)) agent.recordUserMessage(state, message)
    reply = await readModelStream(provider, buildRequest(agent), state.controller.signal,
      (text) => dispatchIsolated(ctx, 'agent/text-delta', agent, turn, step, text))
    if (reply.text || reply.toolCalls.length || !reply.aborted) {
      session.append('assistant/message', {
        turn, step, text: reply.text, toolCalls: reply.toolCalls,
        ...(reply.reasoning ? { reasoning: reply.reasoning } : {}),
        ...(reply.usage ? { usage: reply.usage } : {}),
      })
    }
    const blocked = reply.error || reply.finish === 'max-tokens' ? `the model response ended with ${reply.finish}` : undefined
    for (const call of reply.toolCalls) {
      const skip = state.stop ? `the turn was ${state.stop.kind === 'disposed' ? 'disposed' : 'cancelled'}` : blocked
      calls.push(skip ? skipCall(agent, turn, step, call, skip) : await runCall(agent, state, step, call))
    }
  } finally {
    session.append('step/end', { turn, step })
  }
  if (!state.stop) {
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
      for (const e of errors) logger.error('listener of agent/step-end failed: %s', (e as Error)?.stack ?? e)
    }
  }
  return reply
}

async function runCall(agent: LoopAgent, state: TurnState, step: number, call: ToolCall): Promise<ToolCallSummary> {
  const { ctx, tools } = agent.host
  const { session } = agent
  const { turn } = state
  const info: ToolCallInfo = { turn, step, callId: call.id, name: call.name, arguments: call.arguments }
  session.append('tool/call', { ...info })
  dispatchIsolated(ctx, 'agent/tool-start', agent, info)
  let result: ToolResult
  try {
    result = normalizeResult(await tools.execute(call, {
      agent, turn, step, signal: state.controller.signal, turnSources: [...state.sources], cwd: session.header.cwd,
    }))
  } catch (error) {
    // ctx.tools.execute promises never to throw; a broken pipeline must still not take the loop down.
    result = { ok: false, content: '', error: { code: 'TOOL_FAILED', message: `tool "${call.name}" failed: ${describe(error)}` } }
  }
  session.append('tool/result', { turn, step, callId: call.id, ok: result.ok, content: result.content, ...(result.error ? { error: result.error } : {}) })
  dispatchIsolated(ctx, 'agent/tool-end', agent, info, result)
  return { ...info, ...result }
}

/** Every `tool/call` gets exactly one `tool/result`, and the model API needs a result for every call it made. */
function skipCall(agent: LoopAgent, turn: number, step: number, call: ToolCall, why: string): ToolCallSummary {
  const info: ToolCallInfo = { turn, step, callId: call.id, name: call.name, arguments: call.arguments }
  const error = { code: 'ABORTED', message: `not run: ${why}` }
  agent.session.append('tool/call', { ...info })
  agent.session.append('tool/result', { turn, step, callId: call.id, ok: false, content: '', error })
  return { ...info, ok: false, content: '', error }
}

function normalizeResult(result: any): ToolResult {
  if (typeof result === 'string') return { ok: true, content: result }
  const ok = result?.ok !== false
  const content = typeof result?.content === 'string' ? result.content : result?.content === undefined ? '' : JSON.stringify(result.content)
  if (ok) return { ok, content }
  const error = result?.error && typeof result.error === 'object'
    ? { code: String(result.error.code ?? 'TOOL_FAILED'), message: String(result.error.message ?? '') }
    : { code: 'TOOL_FAILED', message: content || 'the tool failed' }
  return { ok, content, error }
}
