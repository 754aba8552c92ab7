import type { Context } from 'cordis'
import type { Agent, PolicyEscalation, PolicyVerdict, StepSummary } from '@goalkeeper/agent-loop'
import type { UserMessage } from '@goalkeeper/session'
import { classifyStep } from './classify.ts'
import { Config, type MistakeLimitConfig } from './config.ts'
import { blockText, defaultGuidance, stopText } from './messages.ts'
import { settle } from './settle.ts'
import { stopTurn } from './stop.ts'
import type { MistakeFailure, MistakeLimitState } from './types.ts'

export type { MistakeLimitConfig } from './config.ts'
export type { MistakeFailure, MistakeLimitDecision, MistakeLimitState } from './types.ts'
export { INVALID_CALL_CODES } from './classify.ts'
export { Config }

export const name = 'mistake-limit'
export const inject = ['agents']

/** The goal block code when mistake-limit stops a goal round on its own limit. */
export const STOP_CODE = 'mistake-limit'

const KEPT_FAILURES = 10

/** One decision per agent at a time; an escalation arriving meanwhile joins it instead of asking twice. */
interface Decision {
  verdict: Promise<PolicyVerdict | 'abandoned'>
  /** Set when a policy/escalate joined: the escalating plugin then acts on the verdict, not us. */
  escalated: boolean
}

interface AgentState {
  count: number
  failures: MistakeFailure[]
  pending?: Decision
  cancelled: AbortController
}

export const apply = (ctx: Context, config: MistakeLimitConfig) => {
  const logger = ctx.logger(name)
  const states = new Map<string, AgentState>()
  const unloading = new AbortController()
  const inflight = new Set<Promise<unknown>>()

  const stateOf = (agent: Agent) => {
    let state = states.get(agent.id)
    if (!state) states.set(agent.id, state = { count: 0, failures: [], cancelled: new AbortController() })
    return state
  }
  const reset = (state: AgentState) => {
    state.count = 0
    state.failures = []
  }
  const isHuman = (message: UserMessage) => message.source?.kind === 'human'

  async function resolveVerdict(agent: Agent, st: AgentState, state: MistakeLimitState): Promise<PolicyVerdict | 'abandoned'> {
    // ctx.serial is Cordis's awaiting bail: listeners run in order, the first non-nullish answer wins.
    const settled = await settle(() => ctx.serial('mistake-limit/reached', agent, state), config.decisionTimeoutMs, [unloading.signal, st.cancelled.signal])
    switch (settled.kind) {
      case 'abandoned': return 'abandoned'
      case 'timeout': return { action: 'stop', reason: `no decision within ${config.decisionTimeoutMs} ms` }
      case 'error': {
        const message = (settled.error as Error)?.message ?? String(settled.error)
        logger.warn('the mistake-limit/reached listener failed; stopping: %s', message)
        return { action: 'stop', reason: `the decision hook failed: ${message}` }
      }
    }
    const decision = settled.value
    if (decision == null) return { action: 'stop' }
    if (decision.action === 'continue' || decision.action === 'stop') return decision
    logger.warn('malformed mistake-limit/reached decision, stopping: %o', decision)
    return { action: 'stop', reason: 'the decision hook gave a malformed answer' }
  }

  /** Starts the decision synchronously, so a same-step escalation can find and join it. */
  function decide(agent: Agent, st: AgentState, state: MistakeLimitState, escalated: boolean): Decision {
    logger.info('limit reached for agent %s (%s, %d/%d)', agent.id, state.cause, state.count, state.limit)
    const decision: Decision = { escalated, verdict: undefined! }
    decision.verdict = resolveVerdict(agent, st, state).then((verdict) => {
      st.pending = undefined
      // Both answers end the streak: a continue must not re-trigger at once, a stop must not carry over.
      if (verdict !== 'abandoned') reset(st)
      return verdict
    })
    st.pending = decision
    inflight.add(decision.verdict)
    decision.verdict.finally(() => inflight.delete(decision.verdict))
    return decision
  }

  async function onStepEnd(agent: Agent, summary: StepSummary) {
    if (unloading.signal.aborted || agent.disposed) return
    const st = stateOf(agent)
    const step = classifyStep(summary, config)
    if (step.kind === 'success') return reset(st)
    if (step.kind === 'neutral') return
    st.count++
    st.failures = [...st.failures, ...step.failures].slice(-KEPT_FAILURES)
    if (st.count < config.limit || st.pending) return
    const state: MistakeLimitState = {
      turn: summary.turn, step: summary.step, count: st.count, limit: config.limit, cause: 'tool-failures', failures: [...st.failures],
    }
    const decision = decide(agent, st, state, false)
    const verdict = await decision.verdict
    if (verdict === 'abandoned' || decision.escalated || unloading.signal.aborted || agent.disposed || agent.turn !== summary.turn) return
    if (verdict.action === 'continue') {
      agent.steer({ content: verdict.guidance?.trim() || defaultGuidance(state), source: { kind: 'plugin', name } })
      return
    }
    stopTurn(ctx, agent, summary.turn, {
      source: name, code: STOP_CODE, blockMessage: blockText(state, verdict.reason), sessionText: stopText(state, verdict.reason),
    })
  }

  function onEscalate(agent: Agent, escalation: PolicyEscalation): Promise<PolicyVerdict | undefined> | undefined {
    if (unloading.signal.aborted || agent.disposed) return
    const st = stateOf(agent)
    const decision = st.pending ?? decide(agent, st, {
      turn: escalation.turn, count: config.limit, limit: config.limit, cause: 'policy-escalation',
      failures: [...st.failures], escalation,
    }, true)
    decision.escalated = true
    return decision.verdict.then((verdict) => verdict === 'abandoned' ? undefined : verdict)
  }

  ctx.effect(function* () {
    yield ctx.on('agent/step-end', (agent, _turn, _step, summary) => {
      const work = onStepEnd(agent, summary)
      inflight.add(work)
      return work.finally(() => inflight.delete(work))
    })
    if (config.answerEscalations) yield ctx.on('policy/escalate', onEscalate)
    yield ctx.on('agent/turn-start', (agent, _turn, messages) => {
      if (messages.some(isHuman)) reset(stateOf(agent))
    })
    // A human message steered into a running turn is real human input too.
    yield ctx.on('session/event', (session, record) => {
      const state = states.get(session.id)
      if (state && record.type === 'user/message' && isHuman(record.data as UserMessage)) reset(state)
    })
    yield ctx.on('agent/cancel-requested', (agent) => {
      const state = states.get(agent.id)
      if (!state) return
      state.cancelled.abort()
      state.cancelled = new AbortController()
    })
    yield ctx.on('agent/disposed', (agent) => {
      states.get(agent.id)?.cancelled.abort()
      states.delete(agent.id)
    })
    // Runs first on unload: release pending decisions (clearing their timers), let handlers finish, drop all state.
    yield async () => {
      unloading.abort()
      await Promise.allSettled([...inflight])
      states.clear()
    }
  }, name)
}
