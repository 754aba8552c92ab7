import { clip } from '@goalkeeper/kit'
import { checkRecord } from './codec.ts'
import { ChainCheck, type Signer } from './integrity.ts'
import { isRecordOf, type SessionHeaderData, type SessionRecord } from './records.ts'
import { type Integrity, SessionError, type SessionSummary } from './types.ts'

const TITLE_LENGTH = 80

/**
 * Text of the first human prompt, whitespace collapsed and shortened to about 80 characters. Reads the
 * message defensively: listing takes files as they are, and a plugin may have written a core type badly.
 */
export function titleOf(record: SessionRecord): string | undefined {
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
  const chain = new ChainCheck(file, id, signer)
  let seq = 0
  let carry: Buffer | undefined
  // An unparsable line is only torn if nothing follows it; remember it until the next line shows up.
  let unparsable: number | undefined
  const take = (line: Buffer) => {
    if (unparsable !== undefined) throw corrupt(file, unparsable, 'is not valid JSON')
    const text = line.toString('utf8')
    let value: any
    try {
      value = JSON.parse(text)
    } catch {
      unparsable = seq + 1
      return
    }
    const problem = checkRecord(value, seq, id)
    if (problem) throw new SessionError(problem.code, `${file}:${seq + 1}: line ${problem.reason}`, file, seq + 1)
    chain.add(text)
    delete value.mac
    builder.add(value as SessionRecord)
    seq++
  }
  for await (const chunk of chunks) {
    let start = 0
    let end = chunk.indexOf(0x0a)
    if (end >= 0 && carry) {
      take(Buffer.concat([carry, chunk.subarray(0, end)]))
      carry = undefined
      start = end + 1
      end = chunk.indexOf(0x0a, start)
    }
    for (; end >= 0; start = end + 1, end = chunk.indexOf(0x0a, start)) take(chunk.subarray(start, end))
    if (start < chunk.length) carry = carry ? Buffer.concat([carry, chunk.subarray(start)]) : chunk.subarray(start)
  }
  // Only the last line may be torn: an unparsable complete line followed by a partial one is corrupt.
  if (unparsable !== undefined && carry) throw corrupt(file, unparsable, 'is not valid JSON')
  if (seq === 0) throw new SessionError('SESSION_CORRUPT', `${file}:1: no complete session header`, file, 1)
  return builder.build(chain.integrity)
}

function corrupt(file: string, line: number, reason: string) {
  return new SessionError('SESSION_CORRUPT', `${file}:${line}: line ${reason}`, file, line)
}
