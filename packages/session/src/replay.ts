import { checkRecord } from './codec.ts'
import { ChainCheck, type Signer } from './integrity.ts'
import type { SessionRecord } from './records.ts'
import { type Integrity, SessionError } from './types.ts'

export interface LoadedFile {
  records: SessionRecord[]
  /** Length in bytes of the complete, valid lines; anything after it is a torn tail. */
  goodBytes: number
  /** The torn tail (bytes after the last newline, or an unparsable last line), if any. */
  torn?: Buffer
  /** What the macs say (always `unsigned` without a signer). */
  integrity: Integrity
  /** The mac the next record chains from. */
  lastMac: string
}

const NEWLINE = 0x0a

/** Replays a whole session log, read at once: a session is held in memory anyway, and one read plus per-line `JSON.parse` is the fastest replay Node offers. */
export function parseBuffer(buffer: Buffer, file: string, id: string, signer?: Signer): LoadedFile {
  const lastNewline = buffer.lastIndexOf(NEWLINE)
  let goodBytes = lastNewline + 1
  const text = buffer.toString('utf8', 0, goodBytes)
  const records: SessionRecord[] = []
  const chain = new ChainCheck(file, id, signer)
  let start = 0
  while (start < text.length) {
    const end = text.indexOf('\n', start)
    const line = text.slice(start, end)
    let value: any
    try {
      value = JSON.parse(line)
    } catch {
      // A crash can leave the final line complete in length but garbage (e.g. zero-filled blocks), so an
      // unparsable *last* line counts as torn. Anywhere else, even right before a torn tail, it is
      // corruption the user must look at.
      if (end === text.length - 1 && goodBytes === buffer.length) {
        goodBytes = buffer.lastIndexOf(NEWLINE, lastNewline - 1) + 1
        break
      }
      throw corruptLine(file, records.length + 1, 'is not valid JSON')
    }
    const problem = checkRecord(value, records.length, id)
    if (problem) throw new SessionError(problem.code, `${file}:${records.length + 1}: line ${problem.reason}`, file, records.length + 1)
    chain.add(line)
    delete value.mac
    records.push(value as SessionRecord)
    start = end + 1
  }
  if (records.length === 0) throw new SessionError('SESSION_CORRUPT', `${file}:1: no complete session header (the file is empty or its only line is torn)`, file, 1)
  return { records, goodBytes, torn: goodBytes < buffer.length ? buffer.subarray(goodBytes) : undefined, integrity: chain.integrity, lastMac: chain.next() }
}

function corruptLine(file: string, line: number, reason: string) {
  return new SessionError('SESSION_CORRUPT', `${file}:${line}: line ${reason}`, file, line)
}
