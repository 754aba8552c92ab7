import type { Logger } from 'cordis'
import type { Agent, PromptDecision, Submission } from '@goalkeeper/agent-loop'
import type { GoalState } from '@goalkeeper/goal'
import type { UserMessage } from '@goalkeeper/session'
import { errorMessage } from './errors.ts'
import { goalMoved, isExactly, isGoalSourced, roundMismatch, type Reservation } from './reservation.ts'

/** What the admission fence needs from the driver. */
export interface AdmissionHost {
  readonly closed: boolean
  readonly logger: Logger
  reservationOf(agent: Agent): Reservation | undefined
  goalOf(agent: Agent): GoalState | undefined
  rejectValidRound(agent: Agent, res: Reservation, why: string): void
  fail(agent: Agent, where: string, error: unknown): void
}

/**
 * The `agent/prompt-submit` fence (DESIGN.md section 9.5). Only the exact reservation may pass, and
 * only while the live goal still fits it; that is checked before `next()` and again after, because a
 * later hook may have edited or paused the goal. Human messages in the batch are never touched.
 */
export async function admitBatch(host: AdmissionHost, agent: Agent, submission: Submission, next: () => Promise<PromptDecision>): Promise<PromptDecision> {
  let candidate: Reservation | undefined
  try {
    candidate = fenceBefore(host, agent, submission)
  } catch (error) {
    host.fail(agent, 'admission', error)
    submission.messages = submission.messages.filter((m) => !isGoalSourced(m))
    candidate = undefined
  }
  let decision: PromptDecision
  try {
    decision = await next()
  } catch (error) {
    if (candidate) host.rejectValidRound(agent, candidate, `a later admission hook failed (${errorMessage(error)})`)
    throw error
  }
  try {
    return fenceAfter(host, agent, candidate, decision)
  } catch (error) {
    host.fail(agent, 'admission', error)
    return withoutGoalMessages(decision, undefined)
  }
}

/**
 * `agent/admit` listener: the fence's last word, in the tick the turn opens (the loop appends the turn's
 * records right after it). A goal-sourced message opens a turn only as the reservation the fence admitted,
 * still valid then: this closes the microtasks between the fence's check and the turn, and holds even when
 * a listener outside the fence put a dropped message back into the decision. The reasons are recorded.
 */
export function lastWord(host: AdmissionHost, agent: Agent, message: UserMessage): string | undefined {
  if (!isGoalSourced(message)) return
  try {
    const res = host.reservationOf(agent)
    if (!res || !isExactly(res, message)) {
      host.logger.warn('vetoed goal-sourced message %s of agent %s: it is not the round the driver reserved', message.id, agent.id)
      return 'unreserved-goal-round'
    }
    const stale = res.phase === 'admitted' ? staleness(host, agent, res) : 'the fence did not admit it'
    if (!stale) return
    host.logger.info('vetoed goal round %d of agent %s as its turn opened: %s', res.source.round, agent.id, stale)
    return 'stale-goal-round'
  } catch (error) {
    host.fail(agent, 'agent/admit', error)
    return 'stale-goal-round'
  }
}

function fenceBefore(host: AdmissionHost, agent: Agent, submission: Submission): Reservation | undefined {
  const res = host.reservationOf(agent)
  let candidate: Reservation | undefined
  const kept: UserMessage[] = []
  for (const message of submission.messages) {
    if (!isGoalSourced(message)) {
      kept.push(message)
      continue
    }
    if (!res || message.id !== res.id) {
      host.logger.warn('dropped goal-sourced message %s of agent %s: it is not the round the driver reserved', message.id, agent.id)
      continue
    }
    const why = candidate ? 'the batch holds it twice' : whyNotAdmissible(host, agent, res, message)
    if (why) {
      host.logger.info('dropped goal round %d of agent %s before admission: %s', res.source.round, agent.id, why)
      continue
    }
    candidate = res
    kept.push(message)
  }
  if (kept.length !== submission.messages.length) submission.messages = kept
  if (candidate) candidate.phase = 'deciding'
  return candidate
}

function whyNotAdmissible(host: AdmissionHost, agent: Agent, res: Reservation, message: UserMessage): string | undefined {
  if (!isExactly(res, message)) {
    // The round cannot run as reserved; re-reserving would meet the same tampering, so stop here.
    host.rejectValidRound(agent, res, 'its queued message no longer matches the reserved prompt')
    return 'it differs from the reserved prompt'
  }
  return staleness(host, agent, res)
}

/** Why a reservation must be dropped without using a round, or undefined while it is still valid. */
function staleness(host: AdmissionHost, agent: Agent, res: Reservation): string | undefined {
  if (host.closed) return 'the round driver is unloading'
  if (res.stale) return 'other input was queued after it'
  if (res.cancelled) return 'it was cancelled'
  if (res.rejected) return 'it was already refused'
  const goal = host.goalOf(agent)
  const moved = goalMoved(goal, res.source)
  if (moved) return moved
  const mismatch = roundMismatch(goal, res.source)
  // Same goal, same revision, yet not the next round: re-reserving would meet the same verdict forever.
  if (mismatch) host.fail(agent, 'admission', new Error(`goal round ${res.source.round} does not fit its unchanged goal: ${mismatch}`))
  return mismatch
}

function fenceAfter(host: AdmissionHost, agent: Agent, candidate: Reservation | undefined, decision: PromptDecision): PromptDecision {
  if (!candidate) return withoutGoalMessages(decision, undefined)
  const stale = staleness(host, agent, candidate)
  if (stale) {
    host.logger.info('dropped goal round %d of agent %s after admission hooks: %s', candidate.source.round, agent.id, stale)
    return withoutGoalMessages(decision, undefined)
  }
  if (!isSubmit(decision) || !decision.messages.some((m) => m?.id === candidate.id)) {
    const why = decision?.kind === 'reject'
      ? `a later admission hook rejected the batch (${String(decision.reason)})`
      : isSubmit(decision) ? 'a later admission hook dropped it' : 'a later admission hook returned no valid decision'
    host.rejectValidRound(agent, candidate, why)
    return isSubmit(decision) ? withoutGoalMessages(decision, undefined) : decision
  }
  candidate.phase = 'admitted'
  return withoutGoalMessages(decision, candidate.id)
}

function isSubmit(decision: unknown): decision is Extract<PromptDecision, { kind: 'submit' }> {
  return typeof decision === 'object' && decision !== null
    && (decision as PromptDecision).kind === 'submit' && Array.isArray((decision as { messages?: unknown }).messages)
}

/** Goal-sourced messages other than the admitted round never leave the fence, whoever added them. */
function withoutGoalMessages(decision: PromptDecision, keepId: string | undefined): PromptDecision {
  if (!isSubmit(decision)) return decision
  const messages = decision.messages.filter((m) => !isGoalSourced(m) || m.id === keepId)
  return messages.length === decision.messages.length ? decision : { ...decision, messages }
}
