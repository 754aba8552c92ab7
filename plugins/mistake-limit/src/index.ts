import type { Context } from 'cordis'
import { describeError } from '@goalkeeper/kit'
import {
  actOnVerdict, awaitVerdict, isVerdict, policyRuntime, toolMatcher,
  type PolicyBlockCode, type PolicyEscalation, type PolicyVerdict, type VerdictOutcome,
} from '@goalkeeper/policy'
import type { Agent, StepSummary } from '@goalkeeper/agent-loop'
import { classifyStep } from './classify.ts'
import { Config, type MistakeLimitConfig } from './config.ts'
import { blockText, defaultGuidance, stopText } from './messages.ts'
import { StaleFailures } from './stale.ts'
import type { MistakeFailure, MistakeLimitDecision, MistakeLimitState } from './types.ts'

export type { MistakeLimitConfig } from './config.ts'
export type { MistakeFailure, MistakeLimitDecision, MistakeLimitState } from './types.ts'
export { INVALID_CALL_CODES } from './classify.ts'
export { Config }

export const name = 'mistake-limit'
export const inject = ['agents']

/** The goal block code when mistake-limit stops a goal round on its own limit. */
export const STOP_CODE: PolicyBlockCode = 'mistake-limit'

const KEPT_FAILURES = 10

/** One decision per agent at a time; an escalation arriving meanwhile joins it instead of asking twice. */
interface Decision {
  verdict: Promise<PolicyVerdict | 'abandoned'>
  /** Ends the decision unanswered. */
  abandon(): void
  /** Set when a policy/escalate joined: the escalating plugin then acts on the verdict, not us. */
  escalated: boolean
}

/** Per agent: the consecutive mistake steps, the latest judged steps, their failures, and the decision under way. */
interface Tally {
  count: number
  /** The latest judged steps, oldest first: true for a mistake, false for a success (at most `window`). */
  recent: boolean[]
  failures: MistakeFailure[]
  /** A timeout that counts only if another follows it before a success. */
  timedOut?: MistakeFailure[]
  /** Failures of the turn since its last success that changed anything. */
  stale: StaleFailures
  pending?: Decision
}

export const apply = (ctx: Context, config: MistakeLimitConfig) => {
  const logger = ctx.logger(name)
  const writes = toolMatcher(ctx, { names: config.writeTools, kinds: config.writeKinds })

  const reset = (tally: Tally) => {
    tally.count = 0
    tally.recent = []
    tally.failures = []
    tally.timedOut = undefined
    tally.stale.reset()
  }
  const windowOf = (tally: Tally) => ({ failed: tally.recent.filter(Boolean).length, size: tally.recent.length, limit: config.windowLimit })
  /** Records one judged step (a mistake, or a success) in the window. */
  const judge = (tally: Tally, mistake: boolean) => {
    tally.recent.push(mistake)
    if (tally.recent.length > config.window) tally.recent.shift()
  }
  function verdictOf(outcome: VerdictOutcome<MistakeLimitDecision>): PolicyVerdict | 'abandoned' {
    if (outcome === 'abandoned') return outcome
    if (outcome === 'timeout') return { action: 'stop', reason: `no decision within ${config.decisionTimeoutMs} ms` }
    if ('error' in outcome) {
      const message = describeError(outcome.error)
      logger.warn('the mistake-limit/reached listener failed; stopping: %s', message)
      return { action: 'stop', reason: `the decision hook failed: ${message}` }
    }
    const decision = outcome.value
    if (decision == null) return { action: 'stop' }
    if (isVerdict(decision)) return decision
    logger.warn('malformed mistake-limit/reached decision, stopping: %o', decision)
    return { action: 'stop', reason: 'the decision hook gave a malformed answer' }
  }

  /** Starts the decision synchronously, so a same-step escalation can find and join it. */
  function decide(agent: Agent, tally: Tally, state: MistakeLimitState): Decision {
    logger.info('limit reached for agent %s (%s, %d/%d)', agent.id, state.cause, state.count, state.limit)
    const wait = awaitVerdict(ctx, 'mistake-limit/reached', [agent, state], { timeoutMs: config.decisionTimeoutMs, agent })
    const verdict = runtime.track(wait.outcome.then((outcome) => {
      tally.pending = undefined
      // However the decision ended, it settles the streak: neither a continue nor the work that follows
      // a stop or a cancel may re-trigger at once.
      reset(tally)
      return verdictOf(outcome)
    }))
    return tally.pending = { verdict, abandon: wait.abandon, escalated: false }
  }

  /** Counts a step; returns the cause when it reaches a limit. */
  function count(tally: Tally, summary: StepSummary): MistakeLimitState['cause'] | undefined {
    const stale = tally.stale.observe(summary)
    return countStep(tally, summary) ?? (stale ? 'stale-failures' : undefined)
  }

  /** Counts a step toward the consecutive limit and the window. */
  function countStep(tally: Tally, summary: StepSummary): MistakeLimitState['cause'] | undefined {
    const step = classifyStep(summary, config)
    if (step.kind === 'neutral') return
    if (step.kind === 'success') {
      // The failures stay listed: the window may still count them.
      tally.count = 0
      tally.timedOut = undefined
      judge(tally, false)
      return
    }
    let failures = step.failures
    if (step.kind === 'timeout') {
      // One timeout is the environment's; a second before any success means the model keeps waiting on it.
      if (!tally.timedOut) return void (tally.timedOut = failures)
      failures = [...tally.timedOut, ...failures]
      tally.timedOut = undefined
      tally.count++
      judge(tally, true)
    }
    tally.count++
    judge(tally, true)
    tally.failures = [...tally.failures, ...failures].slice(-KEPT_FAILURES)
    if (tally.count >= config.limit) return 'tool-failures'
    if (config.windowLimit && windowOf(tally).failed >= config.windowLimit) return 'failure-window'
  }

  async function onStepEnd(agent: Agent, summary: StepSummary, tally: Tally) {
    const cause = count(tally, summary)
    if (!cause || tally.pending) return
    const { turn } = summary
    const { stale } = tally
    const state: MistakeLimitState = cause === 'stale-failures'
      ? {
        turn, step: summary.step, count: stale.count, limit: config.limit, cause, failures: [...stale.failures], window: windowOf(tally),
        stale: { failures: stale.count, calls: stale.calls, limit: config.staleFailures },
      }
      : { turn, step: summary.step, count: tally.count, limit: config.limit, cause, failures: [...tally.failures], window: windowOf(tally) }
    const decision = decide(agent, tally, state)
    const verdict = await decision.verdict
    if (verdict === 'abandoned' || decision.escalated || runtime.unloading) return
    actOnVerdict(ctx, agent, turn, verdict, {
      source: name, code: STOP_CODE, guidance: defaultGuidance(state),
      blockText: (reason) => blockText(state, reason), stopText: (reason) => stopText(state, reason),
    })
  }

  function onEscalate(agent: Agent, escalation: PolicyEscalation): Promise<PolicyVerdict | undefined> | undefined {
    if (runtime.unloading || agent.disposed) return
    const tally = runtime.of(agent)
    const decision = tally.pending ?? decide(agent, tally, {
      turn: escalation.turn, count: config.limit, limit: config.limit, cause: 'policy-escalation',
      failures: [...tally.failures], window: windowOf(tally), escalation,
    })
    decision.escalated = true
    return decision.verdict.then((verdict) => verdict === 'abandoned' ? undefined : verdict)
  }

  const runtime = policyRuntime<Tally>(ctx, name, {
    create: () => ({ count: 0, recent: [], failures: [], stale: new StaleFailures(config, writes) }),
    reset,
    onStepEnd,
    *listeners() {
      if (config.answerEscalations) yield ctx.on('policy/escalate', onEscalate)
      // The loop starts a step or ends a turn only once every agent/step-end listener has returned, so a
      // decision still pending then has nobody left to act on it (the escalating plugin was unloaded):
      // drop it, with its timer, rather than let it stand in for this plugin's own next limit.
      yield ctx.on('session/event', (session, record) => {
        if (record.type === 'step/start' || record.type === 'turn/end') runtime.get(session.id)?.pending?.abandon()
      })
    },
  })
}
