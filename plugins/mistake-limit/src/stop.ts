import type { Context } from 'cordis'
import type { Agent } from '@goalkeeper/agent-loop'
import type { GoalRef } from '@goalkeeper/goal'
import type { MessageSource, UserMessage } from '@goalkeeper/session'

export interface PolicyStop {
  /** Plugin name, used as the message source. */
  source: string
  /** Goal blocked-reason code. */
  code: string
  /** Goal blocked-reason message (goal round). */
  blockMessage: string
  /** Plugin message recorded in the session (outside a goal round). */
  sessionText: string
}

type GoalSource = Extract<MessageSource, { kind: 'goal' }>

// The goal service refuses longer blocked-reason messages; a truncated reason beats no block at all.
const MAX_BLOCK_MESSAGE = 2000

/**
 * The goal round a turn belongs to, read from the turn's admitted messages in the session log. The
 * log, not a listener, is the source so that a plugin loaded in the middle of a turn still knows.
 */
export function goalSourceOf(agent: Agent, turn: number): GoalSource | undefined {
  const records = agent.session.records
  let found: GoalSource | undefined
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i]
    if (record.type === 'turn/start' && (record.data as { turn: number }).turn === turn) return found
    if (record.type === 'user/message') {
      const source = (record.data as UserMessage).source
      if (source?.kind === 'goal') found = source
    }
  }
}

/** The live goal this turn is a round of: same id and revision, still active. `goals` is optional. */
function liveRound(ctx: Context, agent: Agent, turn: number): { ref: GoalRef } | undefined {
  const source = goalSourceOf(agent, turn)
  const goal = source && ctx.get('goals')?.get(agent)
  if (!source || !goal || goal.id !== source.goalId || goal.revision !== source.revision || goal.phase !== 'active') return
  return { ref: { id: goal.id, revision: goal.revision } }
}

/**
 * DESIGN.md section 10: in a goal round, block the goal first (so the round driver sees a moved
 * revision and does nothing more), otherwise leave a plain explanation in the session; then cancel
 * the turn. Returns false when the turn is already over, in which case nothing is done.
 */
export function stopTurn(ctx: Context, agent: Agent, turn: number, stop: PolicyStop): boolean {
  if (agent.disposed || agent.turn !== turn) return false
  const round = liveRound(ctx, agent, turn)
  let blocked = false
  if (round) {
    try {
      ctx.get('goals')!.block(agent, round.ref, { code: stop.code, message: clip(stop.blockMessage) })
      blocked = true
    } catch (error) {
      ctx.logger(stop.source).warn('could not block goal %s: %s', round.ref.id, (error as Error)?.message ?? error)
    }
  }
  if (!blocked) agent.steer({ content: stop.sessionText, source: { kind: 'plugin', name: stop.source } })
  agent.cancel('policy', { turn })
  return true
}

function clip(text: string): string {
  return text.length > MAX_BLOCK_MESSAGE ? `${text.slice(0, MAX_BLOCK_MESSAGE - 1)}…` : text
}
