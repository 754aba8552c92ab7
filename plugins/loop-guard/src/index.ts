import type { Context } from 'cordis'
import type { Agent, PolicyEscalation, PolicyVerdict, StepSummary } from '@goalkeeper/agent-loop'
import type { UserMessage } from '@goalkeeper/session'
import { Config, type LoopGuardConfig } from './config.ts'
import { LoopDetector } from './detector.ts'
import { blockText, escalationText, hintText, stopText } from './messages.ts'
import { settle } from './settle.ts'
import { stopTurn } from './stop.ts'
import type { LoopFinding } from './types.ts'

export type { LoopGuardConfig } from './config.ts'
export type { LoopCall, LoopFinding, LoopKind } from './types.ts'
export { Config }

export const name = 'loop-guard'
export const inject = ['agents']

/** The code of the escalation, and of the goal block when loop-guard stops a goal round. */
export const STOP_CODE = 'repeated-tool-call'

interface AgentState {
  detector: LoopDetector
  /** Aborted when the agent's work is cancelled, so a pending verdict stops being awaited. */
  cancelled: AbortController
}

export const apply = (ctx: Context, config: LoopGuardConfig) => {
  const logger = ctx.logger(name)
  const states = new Map<string, AgentState>()
  const unloading = new AbortController()
  const inflight = new Set<Promise<void>>()
  const chars = config.argumentsPreviewChars

  const stateOf = (agent: Agent) => {
    let state = states.get(agent.id)
    if (!state) states.set(agent.id, state = { detector: new LoopDetector(config), cancelled: new AbortController() })
    return state
  }
  const steer = (agent: Agent, text: string) => agent.steer({ content: text, source: { kind: 'plugin', name } })
  const isHuman = (message: UserMessage) => message.source?.kind === 'human'

  async function askVerdict(agent: Agent, state: AgentState, escalation: PolicyEscalation): Promise<PolicyVerdict | undefined | 'abandoned'> {
    // ctx.serial is Cordis's awaiting bail: listeners run in order, the first non-nullish answer wins.
    const settled = await settle(() => ctx.serial('policy/escalate', agent, escalation), config.escalationTimeoutMs, [unloading.signal, state.cancelled.signal])
    if (settled.kind === 'abandoned') return 'abandoned'
    if (settled.kind === 'timeout') {
      logger.warn('no policy/escalate verdict within %d ms; stopping', config.escalationTimeoutMs)
      return
    }
    if (settled.kind === 'error') {
      logger.warn('a policy/escalate listener failed; stopping: %s', (settled.error as Error)?.message ?? settled.error)
      return
    }
    const verdict = settled.value
    if (verdict == null || verdict.action === 'continue' || verdict.action === 'stop') return verdict ?? undefined
    logger.warn('ignoring a malformed policy/escalate verdict: %o', verdict)
  }

  async function escalate(agent: Agent, state: AgentState, finding: LoopFinding, turn: number) {
    const escalation: PolicyEscalation = { source: name, code: STOP_CODE, message: escalationText(finding, chars), turn }
    logger.info('escalating for agent %s: %s', agent.id, escalation.message)
    const verdict = await askVerdict(agent, state, escalation)
    if (verdict === 'abandoned' || unloading.signal.aborted || agent.disposed || agent.turn !== turn) return
    // Whatever the verdict, the streak that led here is settled: a continue must not re-trigger at once.
    state.detector.reset()
    if (verdict?.action === 'continue') {
      steer(agent, verdict.guidance?.trim() || hintText(finding, chars))
      return
    }
    const reason = verdict?.action === 'stop' ? verdict.reason : undefined
    stopTurn(ctx, agent, turn, { source: name, code: STOP_CODE, blockMessage: blockText(finding, chars, reason), sessionText: stopText(finding, chars, reason) })
  }

  async function onStepEnd(agent: Agent, summary: StepSummary) {
    if (unloading.signal.aborted || agent.disposed) return
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
    yield ctx.on('agent/turn-start', (agent, _turn, messages) => {
      if (messages.some(isHuman)) stateOf(agent).detector.reset()
    })
    // A human message steered into a running turn is real human input too.
    yield ctx.on('session/event', (session, record) => {
      if (record.type === 'user/message' && isHuman(record.data as UserMessage)) states.get(session.id)?.detector.reset()
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
    // Runs first on unload: release pending verdict waits, let running handlers finish, drop all state.
    yield async () => {
      unloading.abort()
      await Promise.allSettled([...inflight])
      states.clear()
    }
  }, name)
}
