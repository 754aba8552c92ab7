import { describe, expect, it } from 'vitest'
import { BatchSigner, Signer } from '../src/integrity.ts'
import type { LogChunk } from '../src/log-reader.ts'
import { replay } from '../src/replay.ts'

// A store that keeps lines (a database) hands replay lines, not bytes: whatever a log holds, replay must
// read the same records, integrity, offsets and torn tail from either, and fail with the same error.
const signer = new Signer(Buffer.alloc(32, 7))
const ID = 'lines-test'

/** A signed log of version 2: the header alone, then batches of three lines, a checkpoint heading one. */
function signedLog(): string[] {
  const header = JSON.stringify({ seq: 0, at: 1, type: 'session/header', data: { version: 2, id: ID, createdAt: 1, cwd: '/w' } })
  const batches = new BatchSigner(signer, signer.seed(ID))
  const lines = batches.sign([header], 0, 0)
  const body: string[] = []
  for (let seq = 1; seq <= 9; seq++) {
    const type = seq === 7 ? 'session/checkpoint' : 'note'
    body.push(JSON.stringify({ seq, at: seq, type, data: { text: seq % 2 ? 'plain' : 'é€𝄞' } }))
  }
  batches.markHead(7)
  let offset = Buffer.byteLength(`${lines[0]}\n`)
  for (let first = 1; first <= 9; first += 3) {
    const signed = batches.sign(body.slice(first - 1, first + 2), first, offset)
    for (const line of signed) offset += Buffer.byteLength(`${line}\n`)
    lines.push(...signed)
  }
  return lines
}

async function* chunks(parts: LogChunk[]) {
  yield* parts
}

/** Replay of `lines` (each ending in a newline in the log) from bytes, and from lines `per` at a time. */
async function both(lines: string[], per: number) {
  const bytes = replay(chunks([Buffer.from(`${lines.join('\n')}\n`)]), 'log', ID, signer)
  const groups: LogChunk[] = []
  for (let i = 0; i < lines.length; i += per) groups.push(lines.slice(i, i + per))
  const read = replay(chunks(groups), 'log', ID, signer)
  return Promise.allSettled([bytes, read])
}

describe('replay of lines', () => {
  it('reads a signed log from lines as from its bytes: records, offsets of its checkpoint, the mac it ends with', async () => {
    const lines = signedLog()
    for (const per of [1, 2, 3, 100]) {
      const [bytes, read] = await both(lines, per)
      expect(bytes.status).toBe('fulfilled')
      expect(read).toEqual(bytes)
    }
    const [{ value }] = (await both(lines, 4)) as PromiseFulfilledResult<Awaited<ReturnType<typeof replay>>>[]
    expect(value.integrity).toEqual({ state: 'signed', lines: 10, unsignedPrefix: 0 })
    // The checkpoint's offset counts the bytes of the lines before it, multi-byte characters included.
    expect(value.lastCheckpoint?.offset).toBe(Buffer.byteLength(`${lines.slice(0, 7).join('\n')}\n`))
    expect(value.goodBytes).toBe(Buffer.byteLength(`${lines.join('\n')}\n`))
  })

  it('finds an edited line, an unparsable last line and a newline inside a line as it does in bytes', async () => {
    const edited = signedLog()
    edited[4] = edited[4].replace('é€𝄞', 'plain')
    const torn = signedLog()
    torn[9] = '{"seq":9,"at":'
    const split = signedLog()
    split[4] = split[4].replace(',"at":', ',\n"at":')
    for (const [lines, expected] of [
      [edited, { status: 'fulfilled', value: expect.objectContaining({ integrity: expect.objectContaining({ state: 'tampered', line: 5 }) }) }],
      [torn, { status: 'fulfilled', value: expect.objectContaining({ torn: Buffer.from(`${torn.slice(7).join('\n')}\n`) }) }],
      // Read whole, the line would parse (JSON allows the newline) and fail only its mac: as bytes, it is two lines.
      [split, { status: 'rejected', reason: expect.objectContaining({ code: 'SESSION_CORRUPT', line: 5 }) }],
    ] as const) {
      for (const per of [1, 3, 100]) {
        const [bytes, read] = await both(lines, per)
        expect(bytes).toEqual(expected)
        expect(read).toEqual(bytes)
      }
    }
  })

  it('completes a line that bytes left unfinished with the lines after it', async () => {
    const lines = signedLog()
    const text = `${lines.slice(0, 4).join('\n')}\n`
    const cut = Buffer.byteLength(text) - 10
    const [expected] = await both(lines, 100)
    const read = await replay(chunks([Buffer.from(text).subarray(0, cut), [lines[3].slice(-9), ...lines.slice(4)]]), 'log', ID, signer)
    expect({ status: 'fulfilled', value: read }).toEqual(expected)
  })
})
