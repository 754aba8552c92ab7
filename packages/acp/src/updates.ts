import type { SessionUpdate } from '@agentclientprotocol/sdk'
import { compactionLine, isRecordOf, type SessionRecord } from '@goalkeeper/session'
import type { ToolDefinition } from '@goalkeeper/tools'
import { HeldText } from './held-text.ts'
import { viewToolCall, viewToolResult } from './tool-view.ts'

const messageId = (turn: number, step: number) => `turn-${turn}-step-${step}`

/** A tool call id for the client: the model's ids repeat across turns (and across processes), these do not. */
export const toolCallId = (turn: number, callId: string) => `${turn}/${callId}`

const text = (value: string) => ({ type: 'text' as const, text: value })

/**
 * Turns session records into ACP session updates. The session log is the source of truth, so a live turn
 * and the replay of a saved one go through the same translation; live, text and reasoning already streamed
 * as deltas are not sent a second time when their `assistant/message` record arrives.
 */
export class RecordTranslator {
  /** Text and reasoning of the steps being streamed, held back near their end until they are complete. */
  private streamedText = new Map<string, HeldText>()
  private streamedReasoning = new Map<string, HeldText>()
  /** Tool calls by client id: the name and arguments their result is shown with. */
  private calls = new Map<string, { name: string; arguments: string }>()

  /**
   * `mask` is applied to streamed text here (the stream masks everything else); `hold` is how many
   * characters stay back (see HeldText); `tools` finds what a tool says of itself (its kind, title,
   * locations and diff), by name, when it is registered.
   */
  constructor(
    private cwd: string,
    private mask: (text: string) => string = (value) => value,
    private hold = 0,
    private tools: (name: string) => ToolDefinition | undefined = () => undefined,
  ) {}

  private held(streams: Map<string, HeldText>, id: string): HeldText {
    let held = streams.get(id)
    if (!held) streams.set(id, (held = new HeldText(this.mask, this.hold)))
    return held
  }

  textDelta(turn: number, step: number, delta: string): SessionUpdate | undefined {
    const id = messageId(turn, step)
    const piece = this.held(this.streamedText, id).push(delta)
    return piece ? { sessionUpdate: 'agent_message_chunk', messageId: id, content: text(piece) } : undefined
  }

  reasoningDelta(turn: number, step: number, delta: string): SessionUpdate | undefined {
    const id = messageId(turn, step)
    const piece = this.held(this.streamedReasoning, id).push(delta)
    return piece ? { sessionUpdate: 'agent_thought_chunk', messageId: id, content: text(piece) } : undefined
  }

  /** The updates one record means for a client; `replay` also shows what people typed. */
  translate(record: SessionRecord, replay: boolean): SessionUpdate[] {
    if (isRecordOf(record, 'user/message')) {
      // Live, the client has just shown its own prompt; goal rounds and plugin notes are not the person speaking.
      if (!replay || record.data.source.kind !== 'human') return []
      return record.data.content.map((block) => ({ sessionUpdate: 'user_message_chunk', messageId: record.data.id, content: text(block.text) }))
    }
    if (isRecordOf(record, 'assistant/message')) {
      const { turn, step, text: said, reasoning, toolCalls } = record.data
      const id = messageId(turn, step)
      const updates: SessionUpdate[] = []
      // What was streamed is completed from the record (the part held back); the rest is sent whole.
      const thought = reasoning && (this.streamedReasoning.get(id)?.finish(reasoning) ?? (this.streamedReasoning.has(id) ? undefined : reasoning))
      if (thought) updates.push({ sessionUpdate: 'agent_thought_chunk', messageId: id, content: text(thought) })
      const rest = said && (this.streamedText.get(id)?.finish(said) ?? (this.streamedText.has(id) ? undefined : said))
      if (rest) updates.push({ sessionUpdate: 'agent_message_chunk', messageId: id, content: text(rest) })
      this.streamedText.delete(id)
      this.streamedReasoning.delete(id)
      for (const call of toolCalls) {
        const clientId = toolCallId(turn, call.id)
        this.calls.set(clientId, { name: call.name, arguments: call.arguments })
        updates.push({ sessionUpdate: 'tool_call', toolCallId: clientId, status: 'pending', ...viewToolCall(call.name, call.arguments, this.cwd, this.tools(call.name)) })
      }
      return updates
    }
    if (isRecordOf(record, 'tool/call')) {
      const clientId = toolCallId(record.data.turn, record.data.callId)
      if (this.calls.has(clientId)) return [{ sessionUpdate: 'tool_call_update', toolCallId: clientId, status: 'in_progress' }]
      // A call the model's message did not list (a log written by other means): show it whole.
      this.calls.set(clientId, { name: record.data.name, arguments: record.data.arguments })
      return [{ sessionUpdate: 'tool_call', toolCallId: clientId, status: 'in_progress', ...viewToolCall(record.data.name, record.data.arguments, this.cwd, this.tools(record.data.name)) }]
    }
    if (isRecordOf(record, 'tool/result')) {
      const clientId = toolCallId(record.data.turn, record.data.callId)
      const call = this.calls.get(clientId) ?? { name: 'tool', arguments: '{}' }
      this.calls.delete(clientId)
      return [{ sessionUpdate: 'tool_call_update', toolCallId: clientId, ...viewToolResult(call.name, call.arguments, record.data, this.cwd, this.tools(call.name)) }]
    }
    if (isRecordOf(record, 'context/compacted')) {
      // Why the model may now "forget" details: said as a thought, not as the answer.
      return [{ sessionUpdate: 'agent_thought_chunk', messageId: `compaction-${record.seq}`, content: text(compactionLine(record.data)) }]
    }
    return []
  }
}
