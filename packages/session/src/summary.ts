import { clip } from '@goalkeeper/kit'
import type { Signer } from './integrity.ts'
import { LogReader } from './log-reader.ts'
import { isRecordOf, type SessionHeaderData, type SessionRecord } from './records.ts'
import type { Integrity, SessionSummary } from './types.ts'

const TITLE_LENGTH = 80

/**
 * Text of the first human prompt, whitespace collapsed and shortened to about 80 characters. Reads the
 * message defensively: listing takes files as they are, and a plugin may have written a core type badly.
 */
function titleOf(record: SessionRecord): string | undefined {
  const message = isRecordOf(record, 'input/queued') ? record.data?.message : isRecordOf(record, 'user/message') ? record.data : undefined
  if (message?.source?.kind !== 'human' || !Array.isArray(message.content)) return
  const block = message.content.find((b) => b?.type === 'text' && typeof b.text === 'string' && b.text.trim())
  if (!block) return
  const text = block.text.replace(/\s+/g, ' ').trim()
  return text.length <= TITLE_LENGTH ? text : `${clip(text, TITLE_LENGTH - 1, '').trimEnd()}…`
}

/** Accumulates a summary record by record, for files and in-memory sessions alike. */
class SummaryBuilder {
  private header?: SessionHeaderData
  private count = 0
  private updatedAt = 0
  private title?: string

  constructor(private id: string, private file: string) {}

  add(record: SessionRecord) {
    if (this.count === 0 && isRecordOf(record, 'session/header')) this.header = record.data
    this.count++
    this.updatedAt = record.at
    this.title ??= titleOf(record)
  }

  build(integrity?: Integrity): SessionSummary {
    const header = this.header!
    return {
      id: this.id,
      file: this.file,
      createdAt: header.createdAt,
      updatedAt: this.updatedAt,
      records: this.count,
      ...(this.title !== undefined && { title: this.title }),
      cwd: header.cwd,
      ...(header.parent && { parent: header.parent }),
      // Listed like a corrupt log, but with what it holds: show still reads it, resume refuses it.
      ...(integrity?.state === 'tampered' && { problem: { code: 'SESSION_TAMPERED', line: integrity.line, reason: integrity.reason } }),
    }
  }
}

export function summarizeRecords(id: string, file: string, records: readonly SessionRecord[], integrity?: Integrity): SessionSummary {
  const builder = new SummaryBuilder(id, file)
  for (const record of records) builder.add(record)
  return builder.build(integrity)
}

/**
 * Summarises a session file while streaming it, so listing many large sessions holds one chunk at a
 * time. Applies the replay rules: a torn last line is ignored, any other bad line fails. With a
 * signer, the mac chain is checked on the way (as `open` does), so a tampered log is marked.
 */
export async function summarizeStream(id: string, file: string, chunks: AsyncIterable<Buffer>, signer?: Signer): Promise<SessionSummary> {
  const builder = new SummaryBuilder(id, file)
  const reader = new LogReader(file, id, signer, (record) => builder.add(record))
  for await (const chunk of chunks) reader.push(chunk)
  reader.finish()
  return builder.build(reader.chain.integrity)
}
