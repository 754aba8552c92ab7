import type { Context } from 'cordis'
import { dispatchIsolated } from '@goalkeeper/kit'
import type { Agent, PolicyEscalation, PolicyVerdict, StepSummary } from '@goalkeeper/agent-loop'
import type { GoalActivation } from '@goalkeeper/goal'
import type { UserMessage } from '@goalkeeper/session'
import { classifyStep } from './classify.ts'
import { Config, type MistakeLimitConfig } from './config.ts'
import { blockText, defaultGuidance, stopText } from './messages.ts'
import type { MistakeFailure, MistakeLimitDecision, MistakeLimitState } from './types.ts'

export type { MistakeLimitConfig } from './config.ts'
export type { MistakeFailure, MistakeLimitDecision, MistakeLimitState } from './types.ts'
export { INVALID_CALL_CODES } from './classify.ts'
export { Config }

export const name = 'mistake-limit'
export const inject = ['agents']

/** The goal block code when mistake-limit stops a goal round on its own limit. */
export const STOP_CODE = 'mistake-limit'

const KEPT_FAILURES = 10

/** How a decision ended: the hook's answer or failure, the timeout, or abandonment (cancel, dispose, unload). */
type Outcome = { value: MistakeLimitDecision | undefined } | { error: unknown } | 'timeout' | 'abandoned'

/** One decision per agent at a time; an escalation arriving meanwhile joins it instead of asking twice. */
interface Decision {
  verdict: Promise<PolicyVerdict | 'abandoned'>
  /** Ends the decision; only the first outcome counts. */
  settle: (outcome: Outcome) => void
  /** Set when a policy/escalate joined: the escalating plugin then acts on the verdict, not us. */
  escalated: boolean
}

/** Per agent: the consecutive mistake steps and their failures, and the decision under way. */
interface Tally {
  count: number
  failures: MistakeFailure[]
  pending?: Decision
}

export const apply = (ctx: Context, config: MistakeLimitConfig) => {
  const logger = ctx.logger(name)
  const tallies = new Map<string, Tally>()
  const inflight = new Set<Promise<unknown>>()
  let unloading = false

  const tallyOf = (agent: Agent) => {
    let tally = tallies.get(agent.id)
    if (!tally) tallies.set(agent.id, tally = { count: 0, failures: [] })
    return tally
  }
  const reset = (tally: Tally | undefined) => {
    if (!tally) return
    tally.count = 0
    tally.failures = []
  }
  const track = <T>(work: Promise<T>) => {
    inflight.add(work)
    return work.finally(() => inflight.delete(work))
  }

  function verdictOf(outcome: Outcome): PolicyVerdict | 'abandoned' {
    if (outcome === 'abandoned') return outcome
    if (outcome === 'timeout') return { action: 'stop', reason: `no decision within ${config.decisionTimeoutMs} ms` }
    if ('error' in outcome) {
      const message = (outcome.error as Error)?.message ?? String(outcome.error)
      logger.warn('the mistake-limit/reached listener failed; stopping: %s', message)
      return { action: 'stop', reason: `the decision hook failed: ${message}` }
    }
    const decision = outcome.value
    if (decision == null) return { action: 'stop' }
    if (decision.action === 'continue' || decision.action === 'stop') return decision
    logger.warn('malformed mistake-limit/reached decision, stopping: %o', decision)
    return { action: 'stop', reason: 'the decision hook gave a malformed answer' }
  }

  /** Starts the decision synchronously, so a same-step escalation can find and join it. */
  function decide(agent: Agent, tally: Tally, state: MistakeLimitState): Decision {
    logger.info('limit reached for agent %s (%s, %d/%d)', agent.id, state.cause, state.count, state.limit)
    let settle!: Decision['settle']
    const outcome = new Promise<Outcome>((resolve) => (settle = resolve))
    const timer = setTimeout(() => settle('timeout'), config.decisionTimeoutMs)
    // ctx.serial is Cordis's awaiting bail: listeners run in order, the first non-nullish answer wins.
    ctx.serial('mistake-limit/reached', agent, state).then((value) => settle({ value }), (error) => settle({ error }))
    const verdict = track(outcome.then((first) => {
      clearTimeout(timer)
      tally.pending = undefined
      // However the decision ended, it settles the streak: neither a continue nor the work that follows
      // a stop or a cancel may re-trigger at once.
      reset(tally)
      return verdictOf(first)
    }))
    return tally.pending = { verdict, settle, escalated: false }
  }

  async function onStepEnd(agent: Agent, summary: StepSummary) {
    if (unloading || agent.disposed) return
    const tally = tallyOf(agent)
    const step = classifyStep(summary, config)
    if (step.kind === 'success') return reset(tally)
    if (step.kind === 'neutral') return
    tally.count++
    tally.failures = [...tally.failures, ...step.failures].slice(-KEPT_FAILURES)
    if (tally.count < config.limit || tally.pending) return
    const state: MistakeLimitState = {
      turn: summary.turn, step: summary.step, count: tally.count, limit: config.limit, cause: 'tool-failures', failures: [...tally.failures],
    }
    const decision = decide(agent, tally, state)
    const verdict = await decision.verdict
    if (verdict === 'abandoned' || decision.escalated || unloading || agent.disposed || agent.turn !== summary.turn) return
    const { turn } = summary
    if (verdict.action === 'continue') {
      agent.steer({ content: verdict.guidance?.trim() || defaultGuidance(state), source: { kind: 'plugin', name } })
    } else {
      // DESIGN.md section 10: block a goal round first, so the round driver sees a moved revision and does nothing more.
      if (!ctx.get('goals')?.blockRound(agent, turn, { code: STOP_CODE, message: blockText(state, verdict.reason) })) {
        agent.steer({ content: stopText(state, verdict.reason), source: { kind: 'plugin', name } })
      }
      agent.cancel('policy', { turn })
    }
    dispatchIsolated(ctx, 'policy/settled', agent, { source: name, turn, action: verdict.action })
  }

  function onEscalate(agent: Agent, escalation: PolicyEscalation): Promise<PolicyVerdict | undefined> | undefined {
    if (unloading || agent.disposed) return
    const tally = tallyOf(agent)
    const decision = tally.pending ?? decide(agent, tally, {
      turn: escalation.turn, count: config.limit, limit: config.limit, cause: 'policy-escalation',
      failures: [...tally.failures], escalation,
    })
    decision.escalated = true
    return decision.verdict.then((verdict) => verdict === 'abandoned' ? undefined : verdict)
  }

  ctx.effect(function* () {
    yield ctx.on('agent/step-end', (agent, _turn, _step, summary) => track(onStepEnd(agent, summary)))
    if (config.answerEscalations) yield ctx.on('policy/escalate', onEscalate)
    // Human input resets the count. Every human message the loop admits is recorded as a user/message, and
    // session/event runs listeners as the record is appended, before agent/turn-start: one listener is enough.
    yield ctx.on('session/event', (session, record) => {
      const tally = tallies.get(session.id)
      if (record.type === 'user/message' && (record.data as UserMessage).source?.kind === 'human') reset(tally)
      // The loop starts a step or ends a turn only once every agent/step-end listener has returned, so a
      // decision still pending then has nobody left to act on it (the escalating plugin was unloaded):
      // drop it, with its timer, rather than let it stand in for this plugin's own next limit.
      else if (record.type === 'step/start' || record.type === 'turn/end') tally?.pending?.settle('abandoned')
    })
    // Arming needs human authority (create or resume) but sends no message: `/goal resume` after a pause
    // must not hand the resumed rounds the count that led to the pause.
    yield ctx.on('goal/activation', (agent, activation: GoalActivation) => {
      if (activation === 'armed') reset(tallies.get(agent.id))
    })
    yield ctx.on('policy/settled', (agent) => reset(tallies.get(agent.id)))
    yield ctx.on('agent/cancel-requested', (agent) => tallies.get(agent.id)?.pending?.settle('abandoned'))
    yield ctx.on('agent/disposed', (agent) => {
      tallies.get(agent.id)?.pending?.settle('abandoned')
      tallies.delete(agent.id)
    })
    // Runs first on unload: release pending decisions (clearing their timers), let handlers finish, drop all state.
    yield async () => {
      unloading = true
      for (const tally of tallies.values()) tally.pending?.settle('abandoned')
      await Promise.allSettled([...inflight])
      tallies.clear()
    }
  }, name)
}
