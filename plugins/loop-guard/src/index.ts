import type { Context } from 'cordis'
import { dispatchIsolated } from '@goalkeeper/kit'
import type { Agent, PolicyEscalation, PolicyVerdict, StepSummary } from '@goalkeeper/agent-loop'
import type { GoalActivation } from '@goalkeeper/goal'
import type { UserMessage } from '@goalkeeper/session'
import { Config, type LoopGuardConfig } from './config.ts'
import { LoopDetector } from './detector.ts'
import { blockText, escalationText, hintText, stopText } from './messages.ts'
import type { LoopFinding } from './types.ts'

export type { LoopGuardConfig } from './config.ts'
export type { LoopCall, LoopFinding, LoopKind } from './types.ts'
export { Config }

export const name = 'loop-guard'
export const inject = ['agents']

/** The code of the escalation, and of the goal block when loop-guard stops a goal round. */
export const STOP_CODE = 'repeated-tool-call'

/** How a verdict wait ended: a listener's answer or failure, the timeout, or abandonment (cancel, dispose, unload). */
type Outcome = { value: PolicyVerdict | undefined } | { error: unknown } | 'timeout' | 'abandoned'

interface AgentState {
  detector: LoopDetector
  /** Settles the pending verdict wait, if any; only its first outcome counts. */
  settle?: (outcome: Outcome) => void
}

export const apply = (ctx: Context, config: LoopGuardConfig) => {
  const logger = ctx.logger(name)
  const states = new Map<string, AgentState>()
  const inflight = new Set<Promise<void>>()
  const chars = config.argumentsPreviewChars
  let unloading = false

  const stateOf = (agent: Agent) => {
    let state = states.get(agent.id)
    if (!state) states.set(agent.id, state = { detector: new LoopDetector(config) })
    return state
  }
  const steer = (agent: Agent, text: string) => agent.steer({ content: text, source: { kind: 'plugin', name } })

  async function askVerdict(agent: Agent, state: AgentState, escalation: PolicyEscalation): Promise<PolicyVerdict | undefined | 'abandoned'> {
    let settle!: (outcome: Outcome) => void
    const outcome = new Promise<Outcome>((resolve) => (settle = state.settle = resolve))
    const timer = setTimeout(() => settle('timeout'), config.escalationTimeoutMs)
    // ctx.serial is Cordis's awaiting bail: listeners run in order, the first non-nullish answer wins.
    ctx.serial('policy/escalate', agent, escalation).then((value) => settle({ value }), (error) => settle({ error }))
    const first = await outcome
    clearTimeout(timer)
    state.settle = undefined
    if (first === 'abandoned') return first
    if (first === 'timeout') {
      logger.warn('no policy/escalate verdict within %d ms; stopping', config.escalationTimeoutMs)
    } else if ('error' in first) {
      logger.warn('a policy/escalate listener failed; stopping: %s', (first.error as Error)?.message ?? first.error)
    } else if (first.value == null || first.value.action === 'continue' || first.value.action === 'stop') {
      return first.value ?? undefined
    } else {
      logger.warn('ignoring a malformed policy/escalate verdict: %o', first.value)
    }
  }

  async function escalate(agent: Agent, state: AgentState, finding: LoopFinding, turn: number) {
    const escalation: PolicyEscalation = { source: name, code: STOP_CODE, message: escalationText(finding, chars), turn }
    logger.info('escalating for agent %s: %s', agent.id, escalation.message)
    const verdict = await askVerdict(agent, state, escalation)
    // However the wait ended, the streak that led here is settled: neither a continue nor the work that
    // follows a stop or a cancel may re-trigger at once.
    state.detector.reset()
    if (verdict === 'abandoned' || unloading || agent.disposed || agent.turn !== turn) return
    if (verdict?.action === 'continue') {
      steer(agent, verdict.guidance?.trim() || hintText(finding, chars))
    } else {
      // DESIGN.md section 10: block a goal round first, so the round driver sees a moved revision and does nothing more.
      const reason = verdict?.action === 'stop' ? verdict.reason : undefined
      if (!ctx.get('goals')?.blockRound(agent, turn, { code: STOP_CODE, message: blockText(finding, chars, reason) })) {
        steer(agent, stopText(finding, chars, reason))
      }
      agent.cancel('policy', { turn })
    }
    dispatchIsolated(ctx, 'policy/settled', agent, { source: name, turn, action: verdict?.action ?? 'stop' })
  }

  async function onStepEnd(agent: Agent, summary: StepSummary) {
    if (unloading || agent.disposed) return
    const state = stateOf(agent)
    const finding = state.detector.observe(summary.toolCalls)
    if (!finding) return
    if (finding.level === 'hard') return escalate(agent, state, finding, summary.turn)
    logger.info('hint for agent %s: %s', agent.id, escalationText(finding, chars))
    steer(agent, hintText(finding, chars))
  }

  const track = (work: Promise<void>) => {
    inflight.add(work)
    return work.finally(() => inflight.delete(work))
  }

  ctx.effect(function* () {
    yield ctx.on('agent/step-end', (agent, _turn, _step, summary) => track(onStepEnd(agent, summary)))
    // Real human input starts over. Every human message the loop admits is recorded as a user/message, and
    // session/event runs listeners as the record is appended, before agent/turn-start: one listener is enough.
    yield ctx.on('session/event', (session, record) => {
      if (record.type === 'user/message' && (record.data as UserMessage).source?.kind === 'human') states.get(session.id)?.detector.reset()
    })
    // Arming needs human authority (create or resume) but sends no message: `/goal resume` after a pause
    // must not hand the resumed rounds the streak that led to the pause.
    yield ctx.on('goal/activation', (agent, activation: GoalActivation) => {
      if (activation === 'armed') states.get(agent.id)?.detector.reset()
    })
    yield ctx.on('policy/settled', (agent) => states.get(agent.id)?.detector.reset())
    yield ctx.on('agent/cancel-requested', (agent) => states.get(agent.id)?.settle?.('abandoned'))
    yield ctx.on('agent/disposed', (agent) => {
      states.get(agent.id)?.settle?.('abandoned')
      states.delete(agent.id)
    })
    // Runs first on unload: release pending verdict waits, let running handlers finish, drop all state.
    yield async () => {
      unloading = true
      for (const state of states.values()) state.settle?.('abandoned')
      await Promise.allSettled([...inflight])
      states.clear()
    }
  }, name)
}
