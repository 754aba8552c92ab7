import { isRecord } from '@goalkeeper/kit'
import { isRecordOf, type SessionRecord, type SummaryFold } from '@goalkeeper/session'
import type { PermissionWaitingRecord } from './types.ts'

/** A call that waits for a person, as a listing keeps it: what the board's overview groups by. */
export interface WaitingApproval {
  callId: string
  tool: string
  why: string
  since: number
}

/**
 * The calls of a session that wait for a person's answer, as a listing fold (`ctx.sessions.list({ folds })`):
 * a `permission/waiting` record opens a wait; the answer (`permission/asked`), the call's result or the end
 * of its turn closes it. A process that died while asking leaves its wait open in the log: a reader that can
 * tell (the board asks the owning process) says so.
 */
export const waitingApprovalsFold: SummaryFold<WaitingApproval[]> = {
  version: 'permission-waiting/1',
  start() {
    const waiting = new Map<string, WaitingApproval & { turn: number }>()
    const close = (callId: unknown) => typeof callId === 'string' && waiting.delete(callId)
    return {
      add(record: SessionRecord) {
        // A summary survives any log: the data is read as it is, not as declared.
        const data: unknown = record.data
        if (!isRecord(data)) return
        if (isRecordOf(record, 'permission/waiting')) {
          const { callId, tool, why, turn } = data as Partial<PermissionWaitingRecord>
          if (typeof callId === 'string' && typeof tool === 'string') waiting.set(callId, { callId, tool, why: typeof why === 'string' ? why : '', since: record.at, turn: Number(turn) })
        } else if (isRecordOf(record, 'permission/asked', 'tool/result')) close(data.callId)
        else if (isRecordOf(record, 'turn/end')) for (const [callId, wait] of waiting) if (wait.turn === data.turn) waiting.delete(callId)
      },
      result: () => [...waiting.values()].map(({ turn: _turn, ...wait }) => wait),
    }
  },
}
