import { isRecordOf, type Session, type ToolErrorInfo } from '@goalkeeper/session'
import type { ModelMessage } from '@goalkeeper/model'

/**
 * The conversation the model sees, folded from the session log. The log is append-only, so the fold is
 * incremental: each step only reads the records appended since the previous one.
 */
export class History {
  private read = 0
  private messages: ModelMessage[] = []
  private toolNames = new Map<string, string>()

  constructor(private session: Session) {}

  current(): ModelMessage[] {
    const records = this.session.records
    for (; this.read < records.length; this.read++) {
      const record = records[this.read]
      if (isRecordOf(record, 'user/message')) {
        this.messages.push({ role: 'user', content: record.data.content })
      } else if (isRecordOf(record, 'assistant/message')) {
        const { text, toolCalls, reasoning } = record.data
        // An empty answer (e.g. an aborted call) carries nothing, and some APIs refuse empty assistant turns.
        if (!text && !toolCalls?.length) continue
        const message: ModelMessage = { role: 'assistant', text: text ?? '', toolCalls: toolCalls ?? [] }
        if (reasoning) message.reasoning = reasoning
        this.messages.push(message)
      } else if (isRecordOf(record, 'tool/call')) {
        this.toolNames.set(record.data.callId, record.data.name)
      } else if (isRecordOf(record, 'tool/result')) {
        const { callId, ok, content, error } = record.data
        this.messages.push({ role: 'tool', callId, name: this.toolNames.get(callId) ?? '', ok, content: resultText(ok, content, error) })
      }
    }
    return this.messages.slice()
  }
}

/** A failed call with no content still has to tell the model what went wrong. */
function resultText(ok: boolean, content: string, error?: ToolErrorInfo): string {
  if (ok || content || !error) return content ?? ''
  return `Error ${error.code}: ${error.message}`
}
