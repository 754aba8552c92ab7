// The record vocabulary shared by every package (DESIGN.md section 3), and the typed way to read it.
// Other packages register their record types in `RecordData` by declaration merging.

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
  /** Ended at a step boundary because someone asked it to yield (`agent.preempt`); `cause` says who and why. */
  | { kind: 'preempted'; cause: string }
  /** `retryAfterMs`: when the provider announced when to try again (a usage limit's reset). */
  | { kind: 'error'; code: string; message: string; retryAfterMs?: number }
  | { kind: 'max-tokens' }
  | { kind: 'disposed' }
  | { kind: 'interrupted' }

export interface Usage {
  /** Every input token of the call, cached ones included. */
  inputTokens: number
  outputTokens: number
  /** Input tokens read from the provider's prompt cache (part of `inputTokens`). */
  cachedInputTokens?: number
  /** Input tokens written to the provider's prompt cache (part of `inputTokens`; priced above plain input by some vendors). */
  cacheWriteInputTokens?: number
  reasoningTokens?: number
}

/**
 * A reasoning block a provider needs back verbatim with the next request (Anthropic's signed `thinking` and
 * `redacted_thinking` blocks, in the API's own shape): kept in the log exactly as received.
 */
export type ReasoningBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }

export interface RecordedToolCall { id: string; name: string; arguments: string }

export interface ToolErrorInfo { code: string; message: string }

/** Who refused a tool call in `tool/before-call`, and why (the call's result is the error `DENIED`). */
export interface ToolDenialInfo { by: string; reason: string }

/** A `tool/before-call` listener replaced the arguments of one call: who, why, and the arguments (JSON) from then on. */
export interface ToolRewriteInfo { by: string; reason?: string; arguments: string }

/**
 * The history the model sees was compacted (agent-loop): the messages of the records up to `uptoSeq`, except
 * those of `keptSeqs`, stand replaced by one user message holding `summary` (none when `summary` is empty),
 * placed before the kept ones; the outputs of the `tool/result` records in `elided` read as a marker. Applying
 * these records in order to the folded log gives exactly the history of every later request.
 */
export interface ContextCompactionData {
  turn: number
  step: number
  /**
   * `threshold`: the estimate passed the configured share of the window; `overflow`: the provider said
   * CONTEXT_OVERFLOW; `request`: asked for (`agent.compact()`, the chat's `/compact`).
   */
  reason: 'threshold' | 'overflow' | 'request'
  /** `summary`: written by the model; `fallback`: deterministic removal; `policy`: a listener replaced the summary. */
  method: 'summary' | 'fallback' | 'policy'
  uptoSeq: number
  keptSeqs: number[]
  summary: string
  elided: number[]
  /** Messages that stand replaced (their count), and tool outputs elided. */
  replaced: number
  /** Estimated tokens of the request before and after. */
  tokensBefore: number
  tokensAfter: number
  contextWindow?: number
  /** Usage of the summary call, when one was made. */
  usage?: Usage
  /** Why the summary was not used, when the fallback ran. */
  fallbackReason?: string
}

export interface SessionHeaderData {
  /** The log format: 1, a mac on every line; 2, one mac per batch of lines written together. */
  version: 1 | 2
  id: string
  createdAt: number
  cwd: string
  /**
   * The session this one was forked from and the last seq copied; `from`: the parent's checkpoint the fork
   * starts at (a fork of a long session): the record after the header is that checkpoint, with the parent's
   * seq, and seqs go on from there (a reader holds the fork like the parent opened from that checkpoint).
   */
  parent?: { id: string; seq: number; from?: number }
  /**
   * The store keeps a seal for this log (every session created since seals exist): every line of it is
   * signed, and a missing seal means its end cannot be trusted.
   */
  sealed?: true
  /** The id of the key that signs the log (`Signer.keyId`, never the key): a reader with another key says so. */
  keyId?: string
}

/** Data of each core record type, by type name (the session and agent-loop vocabulary). */
export interface CoreRecordData {
  /** Seq 0 of every log, written by create and fork. */
  'session/header': SessionHeaderData
  /** A prompt entered the inbox. */
  'input/queued': { message: UserMessage }
  /** Removed from the inbox by a cancel (`reason` the cancel's, or `interrupted` after a restart). */
  'input/cancelled': { messageId: string; reason: string }
  /** Refused by `agent/prompt-submit` or vetoed by `agent/admit`. */
  'input/rejected': { messageId: string; reason: string }
  /** A turn opened. */
  'turn/start': { turn: number }
  /** A message admitted into the turn (plugin injections and steered messages too). */
  'user/message': UserMessage
  /** A step (one model call and its tool calls) began. */
  'step/start': { turn: number; step: number }
  /** A step ended. */
  'step/end': { turn: number; step: number }
  /** The model's answer of one step. */
  'assistant/message': {
    turn: number; step: number; text: string; toolCalls: RecordedToolCall[]; reasoning?: string; usage?: Usage
    /** Signed reasoning blocks to send back with the history, in the order received. */
    reasoningBlocks?: ReasoningBlock[]
    /** The stream broke off after this much output and the call was made again (agent-loop); not part of the history. */
    partial?: true
    /** Why a partial answer ended. */
    error?: { code: string; message: string }
  }
  /** A tool call of the model, with its original arguments. */
  'tool/call': { turn: number; step: number; callId: string; name: string; arguments: string }
  /** What a tool call gave back, denials and rewrites included. */
  'tool/result': {
    turn: number; step: number; callId: string; ok: boolean; content: string; error?: ToolErrorInfo
    /** Set when a `tool/before-call` listener denied the call. */
    denied?: ToolDenialInfo
    /** The rewrites of the call's arguments, in order; the last one's `arguments` are what ran. */
    rewrites?: ToolRewriteInfo[]
  }
  /** How a turn ended. */
  'turn/end': { turn: number; outcome: TurnOutcome }
  /** The history the model sees was compacted (agent-loop). */
  'context/compacted': ContextCompactionData
  /** The log reached `maxSessionBytes`: nothing after this record is written. */
  'session/full': { maxBytes: number; bytes: number }
  /** A person accepted that the end of a cut log is lost (`acceptTruncation`). */
  'session/truncated': { lastSeq: number; sealedSeq?: number; reason: string }
  /** A person adopted an unsigned log: this record is signed over its `unsignedLines` first lines. */
  'session/adopted': { unsignedLines: number }
  /** What a reader needs to continue from here without the records before it (`Session.firstSeq`). */
  'session/checkpoint': SessionCheckpointData
}

/**
 * A checkpoint: each plugin's folded state as it was after the record before this one, by the name it
 * provided it under (`SessionService.provideCheckpoint`). `reason`: written after a compaction, or because
 * `checkpointEvery` records passed since the last.
 */
export interface SessionCheckpointData {
  reason: 'compaction' | 'interval'
  parts: Record<string, unknown>
}

/** The part `name` of a checkpoint record, or undefined when `record` is not a checkpoint or has no such part. */
export function checkpointPart<T = unknown>(record: SessionRecord, name: string): T | undefined {
  if (record.type !== 'session/checkpoint') return undefined
  const parts = (record.data as { parts?: unknown } | null)?.parts
  return parts && typeof parts === 'object' && Object.hasOwn(parts, name) ? (parts as Record<string, T>)[name] : undefined
}

/**
 * Data of every registered record type, by type name: the core's, and those each package registers where it
 * owns them, as Cordis does for `Events`:
 *
 * ```ts
 * declare module '@goalkeeper/session' {
 *   interface RecordData { 'goal/change': GoalChangeData }
 * }
 * ```
 *
 * `isRecordOf` and `session.append` know every registered type; the catalogue test fails on code that
 * appends a type nobody registered, and `npm run catalogue` lists them in DESIGN.md.
 */
export interface RecordData extends CoreRecordData {}

export interface SessionRecord<T = unknown> {
  seq: number
  at: number
  type: string
  data: T
}

export type CoreRecordType = keyof CoreRecordData

/** Every registered record type. */
export type RecordType = keyof RecordData

/** A record of one registered type (a union of records for a union of types). */
export type RecordOf<K extends RecordType> = K extends RecordType ? SessionRecord<RecordData[K]> & { type: K } : never

/** Any record of the core vocabulary; a `switch` on `type` narrows `data`. */
export type CoreRecord = RecordOf<CoreRecordType>

/** Any record of a registered type; a `switch` on `type` narrows `data`. */
export type KnownRecord = RecordOf<RecordType>

/** What `session.append(type, data)` takes as data: the registered shape, or anything for a type nobody registered. */
export type AppendData<K extends string> = K extends RecordType ? RecordData[K] : unknown

/** What `session.append(type, data)` returns. */
export type Appended<K extends string> = K extends RecordType ? RecordOf<K> : SessionRecord

/** The `type` and `data` of a record of one of the registered types `K`. */
type Shape<K extends RecordType> = K extends RecordType ? { type: K; data: RecordData[K] } : never

/**
 * Narrows a record (or anything with `type` and `data`, such as a planned repair) to one of the registered
 * types given: `if (isRecordOf(record, 'turn/end')) record.data.outcome`. It checks the `type` only: the data
 * of a registered type is trusted to follow its declaration, which its owner writes. Code that must survive
 * a file as it is (repair, listing, a strict fold) still reads that data defensively.
 */
export function isRecordOf<R extends { type: string; data: unknown }, K extends RecordType>(record: R, type: K, ...more: K[]): record is R & Shape<K> {
  return record.type === type || (more.length > 0 && (more as string[]).includes(record.type))
}

// Shared queries over a session's records. Turn numbers are unique within a session, so the last
// `turn/start` of a number is that turn's (a fork copies its parent's turns, it does not renumber them).

/** The number of the turn that took the message `messageId` (its `user/message`, steered ones too), if one did. */
export function turnOf(records: readonly SessionRecord[], messageId: string): number | undefined {
  const at = records.findIndex((record) => isRecordOf(record, 'user/message') && record.data.id === messageId)
  for (let index = at - 1; index >= 0; index--) {
    const record = records[index]
    if (isRecordOf(record, 'turn/start')) return record.data.turn
  }
  return undefined
}

/** The records of `turn`, from its `turn/start` to its `turn/end` included (to the end of `records` while it runs). */
export function recordsOfTurn(records: readonly SessionRecord[], turn: number): readonly SessionRecord[] {
  const start = records.findLastIndex((record) => isRecordOf(record, 'turn/start') && record.data.turn === turn)
  if (start < 0) return []
  for (let index = start + 1; index < records.length; index++) {
    const record = records[index]
    if (isRecordOf(record, 'turn/end') && record.data.turn === turn) return records.slice(start, index + 1)
    // A turn that never ended (a log cut short without repair) ends where the next one starts.
    if (isRecordOf(record, 'turn/start')) return records.slice(start, index)
  }
  return records.slice(start)
}

/** The last assistant text that is not blank, trimmed: of `turn` if given, else of all of `records` (the final answer). */
export function lastAssistantText(records: readonly SessionRecord[], turn?: number): string | undefined {
  const scope = turn === undefined ? records : recordsOfTurn(records, turn)
  for (let index = scope.length - 1; index >= 0; index--) {
    const record = scope[index]
    if (!isRecordOf(record, 'assistant/message')) continue
    const text = record.data.text.trim()
    if (text) return text
  }
  return undefined
}

/** How `turn` ended, or, without `turn`, how the last turn that ended in `records` did; undefined if it has not ended. */
export function turnOutcome(records: readonly SessionRecord[], turn?: number): TurnOutcome | undefined {
  for (let index = records.length - 1; index >= 0; index--) {
    const record = records[index]
    if (isRecordOf(record, 'turn/end') && (turn === undefined || record.data.turn === turn)) return record.data.outcome
  }
  return undefined
}
