import { checkpointPart, isRecordOf, type ContextCompactionData, type SessionRecord, type ToolErrorInfo } from '@goalkeeper/session'
import type { ModelMessage } from '@goalkeeper/model'
import { estimateMessage } from './estimate.ts'

/** What the model reads in place of a tool output that compaction removed. */
export const ELIDED_OUTPUT = '[output removed to fit the context window]'

/** One message of the history and the seq of the record it came from (a summary takes its compaction's `uptoSeq`). */
export interface HistoryEntry {
  seq: number
  message: ModelMessage
}

/** What a checkpoint holds of the history: its entries, and the names of the tool calls still waiting for a result. */
export interface HistoryPart {
  entries: HistoryEntry[]
  calls: [callId: string, name: string][]
}

/** The records a history folds: `records[i].seq === firstSeq + i` (a session opened from a checkpoint starts there). */
export interface HistorySource {
  readonly records: readonly SessionRecord[]
  readonly firstSeq?: number
}

/** The history at one moment: its length, its estimated tokens, and its messages, copied when asked for. */
export interface HistorySnapshot {
  readonly length: number
  readonly tokens: number
  messages(): ModelMessage[]
}

/**
 * The conversation the model sees, folded from the session log. The log is append-only, so the fold is
 * incremental: each step only reads the records appended since the previous one. `context/compacted`
 * records rewrite the entries folded so far, so replaying a log gives exactly the history each request had.
 *
 * The token estimate of the history is kept the same way, per message, as messages are added or a compaction
 * replaces them: a long session's step does not walk its whole history to decide whether to compact.
 */
export class History {
  /** Seq of the next record to fold. */
  private read: number
  /** Whether a record was folded (a checkpoint met later is one the session wrote, not one to start from). */
  private started = false
  private list: HistoryEntry[] = []
  /** The messages of `list`, in step with it; appended to, never changed in place (see `snapshot`). */
  private messages: ModelMessage[] = []
  /** Estimated tokens of `messages`. */
  private total = 0
  private costs = new WeakMap<ModelMessage, number>()
  private toolNames = new Map<string, string>()

  constructor(private session: HistorySource) {
    this.read = session.firstSeq ?? 0
  }

  /** The history as a checkpoint keeps it (up to the session's last record). */
  part(): HistoryPart {
    this.catchUp()
    return { entries: this.list.slice(), calls: [...this.toolNames] }
  }

  /** A copy of the messages. */
  current(): ModelMessage[] {
    return this.snapshot().messages()
  }

  /**
   * The history as it is now, copied only when read: a request holds it without a copy per step (a provider
   * reads it once). Messages are only ever appended to the array read here, and a compaction starts a new
   * one, so the first `length` messages of it stay this snapshot.
   */
  snapshot(): HistorySnapshot {
    this.catchUp()
    const { messages, total: tokens } = this
    const length = messages.length
    return { length, tokens, messages: () => messages.slice(0, length) }
  }

  entries(): HistoryEntry[] {
    this.catchUp()
    return this.list.slice()
  }

  /** Estimated tokens of the history as it is now (`estimateMessages(current())`, kept as it changes). */
  tokens(): number {
    this.catchUp()
    return this.total
  }

  /** Estimated tokens of `messages` (history or not), each message estimated once. */
  estimate(messages: readonly ModelMessage[]): number {
    return messages.reduce((sum, message) => sum + this.cost(message), 0)
  }

  /** `estimateMessage`, once per message: messages are never changed, a compaction makes new ones. */
  cost(message: ModelMessage): number {
    let cost = this.costs.get(message)
    if (cost === undefined) {
      cost = estimateMessage(message)
      this.costs.set(message, cost)
    }
    return cost
  }

  private catchUp() {
    const { records, firstSeq = 0 } = this.session
    // A live session let go of records this history had not read yet: it starts again from the checkpoint
    // they preceded, which holds what folding them would have given.
    if (this.read < firstSeq) {
      this.list = []
      this.messages = []
      this.total = 0
      this.toolNames.clear()
      this.read = firstSeq
      this.started = false
    }
    for (; this.read - firstSeq < records.length; this.read++) {
      const record = records[this.read - firstSeq]
      // The first record of a session opened from a checkpoint: the history starts as it was there.
      if (!this.started && this.read === firstSeq && firstSeq > 0) {
        this.restore(checkpointPart<{ history?: HistoryPart }>(record, 'agent-loop')?.history)
      } else this.fold(record)
      this.started = true
    }
  }

  private restore(part: HistoryPart | undefined) {
    for (const entry of part?.entries ?? []) this.add(entry.seq, entry.message)
    for (const [callId, name] of part?.calls ?? []) this.toolNames.set(callId, name)
  }

  private add(seq: number, message: ModelMessage) {
    this.list.push({ seq, message })
    this.messages.push(message)
    this.total += this.cost(message)
  }

  private fold(record: SessionRecord) {
    const { seq } = record
    if (isRecordOf(record, 'user/message')) {
      this.add(seq, { role: 'user', content: record.data.content })
    } else if (isRecordOf(record, 'assistant/message')) {
      const { text, toolCalls, reasoning, reasoningBlocks, partial } = record.data
      // An empty answer (e.g. an aborted call) carries nothing, and some APIs refuse empty assistant turns.
      // A partial one was answered again in full: the retry saw the history without it.
      if ((!text && !toolCalls?.length) || partial) return
      const message: ModelMessage = { role: 'assistant', text: text ?? '', toolCalls: toolCalls ?? [] }
      if (reasoning) message.reasoning = reasoning
      if (reasoningBlocks?.length) message.reasoningBlocks = reasoningBlocks
      this.add(seq, message)
    } else if (isRecordOf(record, 'tool/call')) {
      this.toolNames.set(record.data.callId, record.data.name)
    } else if (isRecordOf(record, 'tool/result')) {
      const { callId, ok, content, error } = record.data
      this.add(seq, { role: 'tool', callId, name: this.toolNames.get(callId) ?? '', ok, content: resultText(ok, content, error) })
      // Answered: a checkpoint keeps only the names of calls still waiting.
      this.toolNames.delete(callId)
    } else if (isRecordOf(record, 'context/compacted')) {
      // Kept entries keep their estimate; only the summary and elided outputs are new messages.
      this.list = applyCompaction(this.list, record.data)
      // A new array: snapshots taken before the compaction keep reading the old one.
      this.messages = this.list.map((entry) => entry.message)
      this.total = this.messages.reduce((sum, message) => sum + this.cost(message), 0)
    }
  }
}

/** The history of every request a log's model calls saw after its last record (a replay of the log). */
export const replayHistory = (records: readonly SessionRecord[], firstSeq = records[0]?.seq ?? 0): ModelMessage[] => new History({ records, firstSeq }).current()

/** The user message that stands in for replaced history. */
export const summaryMessage = (summary: string): ModelMessage => ({ role: 'user', content: [{ type: 'text', text: summary }] })

/**
 * One compaction applied to entries in log order: kept entries up to `uptoSeq` first, then the summary (at
 * `uptoSeq`, so entries stay in seq order and a later compaction can replace the summary too), then the rest;
 * elided tool outputs read as a marker. Pure, so the planner computes "after" with the same code the replay uses.
 */
export function applyCompaction(entries: readonly HistoryEntry[], data: Pick<ContextCompactionData, 'uptoSeq' | 'keptSeqs' | 'summary' | 'elided'>): HistoryEntry[] {
  const kept = new Set(data.keptSeqs)
  const elided = new Set(data.elided)
  const before = entries.filter((entry) => entry.seq <= data.uptoSeq && kept.has(entry.seq) && entry.message.role === 'user')
  const after = entries.filter((entry) => entry.seq > data.uptoSeq)
  const summary = data.summary ? [{ seq: data.uptoSeq, message: summaryMessage(data.summary) }] : []
  return [...before, ...summary, ...after].map((entry) => {
    const { message } = entry
    return message.role === 'tool' && elided.has(entry.seq) ? { seq: entry.seq, message: { ...message, content: ELIDED_OUTPUT } } : entry
  })
}

/** A failed call with no content still has to tell the model what went wrong. */
function resultText(ok: boolean, content: string, error?: ToolErrorInfo): string {
  if (ok || content || !error) return content ?? ''
  return `Error ${error.code}: ${error.message}`
}
