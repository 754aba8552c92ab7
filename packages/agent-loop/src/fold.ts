import { checkpointPart, isRecordOf, type SessionRecord, type UserMessage } from '@goalkeeper/session'

/** What an agent needs to know about a session it starts on: the log is the only source of truth. */
export interface SessionFold {
  /** Max recorded turn + 1, so turn numbers stay unique within a session. */
  nextTurn: number
  /** Ids of every queued or admitted message, to refuse a reused id. */
  knownIds: Set<string>
  /** Queued inputs never admitted, rejected or cancelled, in queue order. */
  pending: UserMessage[]
}

/** What a checkpoint holds of the inputs: the next turn's number, every id used, the queued inputs. */
export interface InputsPart {
  nextTurn: number
  knownIds: string[]
  pending: UserMessage[]
}

/** Folds the records of a session (from its first, or from the checkpoint it was opened at). */
export function foldSession(records: readonly SessionRecord[]): SessionFold {
  let maxTurn = 0
  let knownIds = new Set<string>()
  const queued = new Map<string, UserMessage>()
  const settled = new Set<string>()
  for (const record of records) {
    const part = checkpointPart<{ inputs?: InputsPart }>(record, 'agent-loop')?.inputs
    if (part) {
      // Everything before the checkpoint, as it was there.
      maxTurn = part.nextTurn - 1
      knownIds = new Set(part.knownIds)
      queued.clear()
      settled.clear()
      for (const message of part.pending) queued.set(message.id, message)
    } else if (isRecordOf(record, 'turn/start')) {
      const { turn } = record.data
      if (Number.isInteger(turn) && turn > maxTurn) maxTurn = turn
    } else if (isRecordOf(record, 'input/queued')) {
      const { message } = record.data
      if (message?.id) { queued.set(message.id, message); knownIds.add(message.id) }
    } else if (isRecordOf(record, 'user/message')) {
      const message = record.data
      if (message?.id) { settled.add(message.id); knownIds.add(message.id) }
    } else if (isRecordOf(record, 'input/rejected', 'input/cancelled')) {
      settled.add(record.data.messageId)
    }
  }
  const pending = [...queued.values()].filter((message) => !settled.has(message.id))
  return { nextTurn: maxTurn + 1, knownIds, pending }
}
