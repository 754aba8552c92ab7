import type { Agent } from '@goalkeeper/agent-loop'
import type { ModelRequest, ScriptResponse, ScriptToolCall } from '@goalkeeper/model'
import type { SessionRecord, TurnOutcome, UserMessage } from '@goalkeeper/session'

export const call = (name: string, args: Record<string, unknown> | string = {}): ScriptToolCall => ({ name, arguments: args })
export const tools = (...calls: ScriptToolCall[]): ScriptResponse => ({ toolCalls: calls })
export const done = (text = 'done'): ScriptResponse => ({ text })
export const repeat = <T>(count: number, make: (i: number) => T): T[] => Array.from({ length: count }, (_, i) => make(i))

/** Sends a human prompt and waits until the agent has finished everything it triggered. */
export async function prompt(agent: Agent, text: string, source?: UserMessage['source']): Promise<void> {
  agent.send({ content: text, ...(source ? { source } : {}) })
  await agent.whenIdle()
}

/** Text of every user-role message in a model request (human prompts, hints, steered guidance). */
export function userTexts(request: ModelRequest): string[] {
  return request.messages.flatMap((m) => (m.role === 'user' ? [m.content.map((b) => b.text).join('')] : []))
}

export function pluginMessages(records: SessionRecord[], name: string): string[] {
  return records
    .filter((r) => r.type === 'user/message' && (r.data as UserMessage).source.kind === 'plugin' && (r.data as any).source.name === name)
    .map((r) => (r.data as UserMessage).content.map((b) => b.text).join(''))
}

export function outcomes(records: SessionRecord[]): TurnOutcome[] {
  return records.filter((r) => r.type === 'turn/end').map((r) => (r.data as { outcome: TurnOutcome }).outcome)
}

/** A promise with its resolver, for awaiting an event a listener reports. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}
