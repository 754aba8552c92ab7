// The record vocabulary shared by every package (DESIGN.md section 3). Plugins may add their own `type`s.

export interface TextBlock { type: 'text'; text: string }
export type ContentBlock = TextBlock

export type MessageSource =
  | { kind: 'human' }
  | { kind: 'goal'; goalId: string; revision: number; round: number }
  | { kind: 'plugin'; name: string }

export interface UserMessage {
  id: string
  content: ContentBlock[]
  source: MessageSource
}

export type TurnOutcome =
  | { kind: 'completed' }
  | { kind: 'aborted'; cause: string }
  | { kind: 'error'; code: string; message: string }
  | { kind: 'max-tokens' }
  | { kind: 'disposed' }
  | { kind: 'interrupted' }

export interface Usage {
  inputTokens: number
  outputTokens: number
  cachedInputTokens?: number
  reasoningTokens?: number
}

export interface RecordedToolCall { id: string; name: string; arguments: string }

export interface ToolErrorInfo { code: string; message: string }

export interface SessionHeaderData {
  version: 1
  id: string
  createdAt: number
  cwd: string
  parent?: { id: string; seq: number }
}

/** Data of each core record type, by type name. */
export interface CoreRecordData {
  'session/header': SessionHeaderData
  'input/queued': { message: UserMessage }
  'input/cancelled': { messageId: string; reason: string }
  'input/rejected': { messageId: string; reason: string }
  'turn/start': { turn: number }
  'user/message': UserMessage
  'step/start': { turn: number; step: number }
  'step/end': { turn: number; step: number }
  'assistant/message': { turn: number; step: number; text: string; toolCalls: RecordedToolCall[]; reasoning?: string; usage?: Usage }
  'tool/call': { turn: number; step: number; callId: string; name: string; arguments: string }
  'tool/result': { turn: number; step: number; callId: string; ok: boolean; content: string; error?: ToolErrorInfo }
  'turn/end': { turn: number; outcome: TurnOutcome }
}

export interface SessionRecord<T = unknown> {
  seq: number
  at: number
  type: string
  data: T
}

export type CoreRecord = { [K in keyof CoreRecordData]: SessionRecord<CoreRecordData[K]> & { type: K } }[keyof CoreRecordData]
