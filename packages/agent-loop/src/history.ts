import type { CoreRecordData, Session, ToolErrorInfo } from '@goalkeeper/session'
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
      const { type, data } = records[this.read]
      if (type === 'user/message') {
        const message = data as CoreRecordData['user/message']
        this.messages.push({ role: 'user', content: message.content })
      } else if (type === 'assistant/message') {
        const { text, toolCalls, reasoning } = data as CoreRecordData['assistant/message']
        // An empty answer (e.g. an aborted call) carries nothing, and some APIs refuse empty assistant turns.
        if (!text && !toolCalls?.length) continue
        const message: ModelMessage = { role: 'assistant', text: text ?? '', toolCalls: toolCalls ?? [] }
        if (reasoning) message.reasoning = reasoning
        this.messages.push(message)
      } else if (type === 'tool/call') {
        const call = data as CoreRecordData['tool/call']
        this.toolNames.set(call.callId, call.name)
      } else if (type === 'tool/result') {
        const result = data as CoreRecordData['tool/result']
        this.messages.push({
          role: 'tool',
          callId: result.callId,
          name: this.toolNames.get(result.callId) ?? '',
          ok: result.ok,
          content: resultText(result.ok, result.content, result.error),
        })
      }
    }
    return this.messages.slice()
  }
}

/** A failed call with no content still has to tell the model what went wrong. */
export function resultText(ok: boolean, content: string, error?: ToolErrorInfo): string {
  if (ok || content || !error) return content ?? ''
  return `Error ${error.code}: ${error.message}`
}
