import type { Context } from 'cordis'
import { dispatchIsolated } from '@goalkeeper/kit'
import type { Agent } from '@goalkeeper/agent-loop'
import type {} from '@goalkeeper/goal'
import type { PolicyVerdict } from './types.ts'

export interface TurnStop {
  /** The policy plugin's name: the source of the steered message and of `policy/settled`. */
  source: string
  /** The goal's blocked reason code. */
  code: string
  /** The goal's blocked reason message, when the turn is the goal's live round. */
  blockText: string
  /** The plugin message steered into the session otherwise. */
  stopText: string
}

// A verdict arrives after an await: the agent may be gone, or already in another turn.
const isLive = (agent: Agent, turn: number) => !agent.disposed && agent.turn === turn

/**
 * Stops `turn` on a stop verdict (DESIGN.md section 10): blocks the goal when the turn is its live goal
 * round, first, so the round driver sees a moved revision and does nothing more, or else steers
 * `stopText` into the session; then `agent.cancel('policy', { turn })` and `policy/settled`. `ctx.goals`
 * is optional (Cordis 4 has no optional inject), so it is looked up now. Returns false, doing nothing,
 * when the agent is disposed or no longer in `turn`.
 */
export function stopTurn(ctx: Context, agent: Agent, turn: number, stop: TurnStop): boolean {
  if (!isLive(agent, turn)) return false
  if (!ctx.get('goals')?.blockRound(agent, turn, { code: stop.code, message: stop.blockText }, { by: stop.source })) {
    agent.steer({ content: stop.stopText, source: { kind: 'plugin', name: stop.source } })
  }
  agent.cancel('policy', { turn })
  dispatchIsolated(ctx, 'policy/settled', agent, { source: stop.source, turn, action: 'stop' })
  return true
}

/**
 * A stop verdict for a goal round whose turn is already over (it ended at the step limit, and the round
 * driver starts the next one): blocks the goal if it has not moved since, through the round running now
 * when there is one (so that round winds down at once), else through `turn`; then `policy/settled`.
 * Returns false, doing nothing, when the agent is disposed or the goal moved.
 */
export function stopEndedRound(ctx: Context, agent: Agent, turn: number, stop: Omit<TurnStop, 'stopText'>): boolean {
  const goals = ctx.get('goals')
  if (agent.disposed || !goals) return false
  const reason = { code: stop.code, message: stop.blockText }
  const now = agent.turn
  const blocked = (now !== undefined && goals.blockRound(agent, now, reason, { by: stop.source })) || goals.blockRound(agent, turn, reason, { by: stop.source })
  if (!blocked) return false
  dispatchIsolated(ctx, 'policy/settled', agent, { source: stop.source, turn, action: 'stop' })
  return true
}

/**
 * Lets `turn` go on with `guidance` steered into its next step, then emits `policy/settled`. Returns
 * false, doing nothing, when the agent is disposed or no longer in `turn`.
 */
export function continueTurn(ctx: Context, agent: Agent, turn: number, source: string, guidance: string): boolean {
  if (!isLive(agent, turn)) return false
  agent.steer({ content: guidance, source: { kind: 'plugin', name: source } })
  dispatchIsolated(ctx, 'policy/settled', agent, { source, turn, action: 'continue' })
  return true
}

export interface VerdictTexts {
  /** The policy plugin's name. */
  source: string
  /** The goal's blocked reason code on a stop. */
  code: string
  /** Steered on a continue that brings no guidance of its own. */
  guidance: string
  /** The goal's blocked reason message, given the stop verdict's reason if any. */
  blockText(reason?: string): string
  /** The plugin message steered on a stop outside a goal round. */
  stopText(reason?: string): string
}

/**
 * Acts on a verdict for `turn`: `continue` steers its guidance (or `texts.guidance`) with `continueTurn`;
 * `stop`, or no verdict at all, stops with `stopTurn`. Returns false, doing nothing, when the agent is
 * disposed or no longer in `turn`.
 */
export function actOnVerdict(ctx: Context, agent: Agent, turn: number, verdict: PolicyVerdict | undefined, texts: VerdictTexts): boolean {
  if (verdict?.action === 'continue') return continueTurn(ctx, agent, turn, texts.source, verdict.guidance?.trim() || texts.guidance)
  const reason = verdict?.reason
  return stopTurn(ctx, agent, turn, { source: texts.source, code: texts.code, blockText: texts.blockText(reason), stopText: texts.stopText(reason) })
}
