// Reading what a run left behind: session records and model requests.
import type { ModelRequest } from '@goalkeeper/model'
import { isRecordOf, type SessionRecord, type TurnOutcome } from '@goalkeeper/session'

/** Text of every user-role message in a model request (human prompts, hints, steered guidance). */
export function userTexts(request: ModelRequest): string[] {
  return request.messages.flatMap((m) => (m.role === 'user' ? [m.content.map((b) => b.text).join('')] : []))
}

/** Text of every message a plugin named `name` put into the session. */
export function pluginMessages(records: readonly SessionRecord[], name: string): string[] {
  return records.flatMap((r) => isRecordOf(r, 'user/message') && r.data.source.kind === 'plugin' && r.data.source.name === name
    ? [r.data.content.map((b) => b.text).join('')]
    : [])
}

/** The outcome of every turn, in order. */
export const outcomes = (records: readonly SessionRecord[]): TurnOutcome[] =>
  records.flatMap((r) => (isRecordOf(r, 'turn/end') ? [r.data.outcome] : []))
