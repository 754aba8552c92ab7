import type { Agent } from '@goalkeeper/agent-loop'
import { isRecordOf, nextSeqOf, type SessionRecord } from '@goalkeeper/session'
import type { Context } from 'cordis'

/** How a sent message ended: answered by a turn, dropped before one (with the reason), or the agent went away. */
export type MessageFate = { kind: 'answered' } | { kind: 'cancelled' | 'rejected'; reason: string } | { kind: 'gone' }

/**
 * Resolves when the message with `messageId` has had its answer: the turn that admitted it ended, or it
 * was cancelled or rejected before a turn took it. Also resolves when the agent or the app goes away.
 * Follows the session log, so it does not matter which event order the loop uses.
 */
export function untilAnswered(ctx: Context, agent: Agent, messageId: string, closed: Promise<void>): Promise<MessageFate> {
  return new Promise((resolve) => {
    // A seq, not a position: a live session lets go of the records before a checkpoint as it goes on.
    const isQueued = (record: SessionRecord) => isRecordOf(record, 'input/queued') && record.data.message.id === messageId
    const queued = agent.session.records.find(isQueued)
    let cursor = queued ? queued.seq : agent.session.firstSeq
    let openTurn: number | undefined
    let ourTurn: number | undefined
    const stops: (() => void)[] = []
    let done = false
    const finish = (fate: MessageFate) => {
      if (done) return
      done = true
      for (const stop of stops.splice(0)) stop()
      resolve(fate)
    }
    const step = (record: SessionRecord) => {
      if (isRecordOf(record, 'turn/start')) openTurn = record.data.turn
      else if (isRecordOf(record, 'user/message') && record.data.id === messageId) ourTurn = openTurn
      else if (isRecordOf(record, 'turn/end') && ourTurn !== undefined && record.data.turn === ourTurn) finish({ kind: 'answered' })
      else if (isRecordOf(record, 'input/cancelled', 'input/rejected') && record.data.messageId === messageId) {
        finish({ kind: record.type === 'input/cancelled' ? 'cancelled' : 'rejected', reason: String(record.data.reason) })
      }
    }
    const advance = () => {
      const { session } = agent
      cursor = Math.max(cursor, session.firstSeq)
      while (!done && cursor < nextSeqOf(session)) step(session.records[cursor++ - session.firstSeq])
    }
    stops.push(ctx.on('session/event', (session) => {
      if (session.id === agent.id) advance()
    }))
    stops.push(ctx.on('agent/disposed', (gone: Agent) => {
      if (gone.id === agent.id) finish({ kind: 'gone' })
    }))
    void closed.then(() => finish({ kind: 'gone' }))
    advance()
    if (agent.disposed) finish({ kind: 'gone' })
  })
}
