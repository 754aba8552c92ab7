import type { CoreRecordData, SessionRecord, UserMessage } from '@goalkeeper/session'

/** What an agent needs to know about a session it starts on: the log is the only source of truth. */
export interface SessionFold {
  /** Max recorded turn + 1, so turn numbers stay unique within a session. */
  nextTurn: number
  /** Ids of every queued or admitted message, to refuse a reused id. */
  knownIds: Set<string>
  /** Queued inputs never admitted, rejected or cancelled, in queue order. */
  pending: UserMessage[]
}

export function foldSession(records: readonly SessionRecord[]): SessionFold {
  let maxTurn = 0
  const knownIds = new Set<string>()
  const queued = new Map<string, UserMessage>()
  const settled = new Set<string>()
  for (const record of records) {
    switch (record.type) {
      case 'turn/start': {
        const { turn } = record.data as CoreRecordData['turn/start']
        if (Number.isInteger(turn) && turn > maxTurn) maxTurn = turn
        break
      }
      case 'input/queued': {
        const { message } = record.data as CoreRecordData['input/queued']
        if (message?.id) { queued.set(message.id, message); knownIds.add(message.id) }
        break
      }
      case 'user/message': {
        const message = record.data as CoreRecordData['user/message']
        if (message?.id) { settled.add(message.id); knownIds.add(message.id) }
        break
      }
      case 'input/rejected':
      case 'input/cancelled':
        settled.add((record.data as CoreRecordData['input/rejected']).messageId)
        break
    }
  }
  const pending = [...queued.values()].filter((message) => !settled.has(message.id))
  return { nextTurn: maxTurn + 1, knownIds, pending }
}
