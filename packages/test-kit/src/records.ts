// Reading what a run left behind: session records and model requests.
import type { ModelRequest } from '@goalkeeper/model'
import type { SessionRecord, TurnOutcome, UserMessage } from '@goalkeeper/session'

/** Text of every user-role message in a model request (human prompts, hints, steered guidance). */
export function userTexts(request: ModelRequest): string[] {
  return request.messages.flatMap((m) => (m.role === 'user' ? [m.content.map((b) => b.text).join('')] : []))
}

/** Text of every message a plugin named `name` put into the session. */
export function pluginMessages(records: readonly SessionRecord[], name: string): string[] {
  return records
    .filter((r) => r.type === 'user/message' && (r.data as UserMessage).source.kind === 'plugin' && (r.data as any).source.name === name)
    .map((r) => (r.data as UserMessage).content.map((b) => b.text).join(''))
}

/** The outcome of every turn, in order. */
export const outcomes = (records: readonly SessionRecord[]): TurnOutcome[] =>
  records.filter((r) => r.type === 'turn/end').map((r) => (r.data as { outcome: TurnOutcome }).outcome)
