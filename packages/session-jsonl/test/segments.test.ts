// A log split into segments: rollover at checkpoints, reads of the concatenation, the signed segment index,
// tampering inside and across segments, and a rollover interrupted at each of its steps.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { Session, SessionService } from '@goalkeeper/session'
import { JsonlFileStore } from '@goalkeeper/session-jsonl'
import { appsPerTest, signedSegmentIndex, tempDir, TEST_KEY } from '../../session/test/helpers.ts'
import { nodeArgs } from '@goalkeeper/test-kit'

const here = path.dirname(fileURLToPath(import.meta.url))

const launch = appsPerTest()
/** Small segments, so that a few hundred records roll over many times. */
const SEGMENT = 4096

/** Every segment of the log at `file`, oldest first, then the live one: what the log is. */
async function segmentNames(file: string): Promise<string[]> {
  const base = path.basename(file)
  const names = (await fs.readdir(path.dirname(file))).filter((name) => /^\d{6}$/.test(name.slice(base.length + 1)) && name.startsWith(`${base}.`)).sort()
  return [...names.map((name) => path.join(path.dirname(file), name)), file]
}

async function wholeLog(file: string): Promise<Buffer> {
  return Buffer.concat(await Promise.all((await segmentNames(file)).map((name) => fs.readFile(name))))
}

/** A closed session of `items` records with a checkpoint after every `every`. */
async function written(sessions: SessionService, dir: string, items = 400, every = 20): Promise<{ id: string; file: string; lastCheckpoint: number }> {
  const session = await sessions.create({ cwd: dir })
  let lastCheckpoint = 0
  for (let i = 1; i <= items; i++) {
    session.append('test/item', { i, text: 'x'.repeat(40) })
    if (i % every === 0) {
      lastCheckpoint = sessions.checkpoint(session, 'interval')!.seq
      // A flush between checkpoints, as turns make: batches of a few lines, not one batch of everything.
      await sessions.flush(session)
    }
  }
  await sessions.close(session)
  return { id: session.id, file: session.file, lastCheckpoint }
}

/** The background check of the log before the checkpoint a writable open started from, once it is done. */
const headChecked = (session: Session) => (session as unknown as { headCheck?: { done: Promise<void> } }).headCheck?.done

const seqs = (session: Session) => session.records.map((record) => record.seq)

describe('a log kept in segments', () => {
  it('rolls over at checkpoints once the live segment is full, and reads back as one log', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir, { segmentBytes: SEGMENT })
    const { id, file, lastCheckpoint } = await written(sessions, dir)
    const names = await segmentNames(file)
    expect(names.length).toBeGreaterThan(5)
    const store = new JsonlFileStore(dir, { segmentBytes: SEGMENT })
    // Each closed segment starts with a checkpoint (the first with the header), and holds at least SEGMENT bytes.
    for (const [i, name] of names.entries()) {
      const first = JSON.parse((await fs.readFile(name, 'utf8')).split('\n')[0])
      expect(first.type, name).toBe(i === 0 ? 'session/header' : 'session/checkpoint')
      if (i < names.length - 1) expect((await fs.stat(name)).size).toBeGreaterThanOrEqual(SEGMENT)
    }
    const whole = await wholeLog(file)
    expect((await store.version(id)).size).toBe(whole.length)
    const streamed: Buffer[] = []
    for await (const chunk of store.stream(id)) streamed.push(chunk)
    expect(Buffer.concat(streamed).equals(whole)).toBe(true)
    // Any range of the concatenation, across segment boundaries too.
    for (const [start, end] of [[0, 10], [SEGMENT - 5, SEGMENT + 5000], [100, whole.length - 1], [whole.length - 3, whole.length]]) {
      const parts: Buffer[] = []
      for await (const chunk of store.stream(id, { start, end })) parts.push(chunk)
      expect(Buffer.concat(parts).equals(whole.subarray(start, end)), `${start}-${end}`).toBe(true)
    }
    const read = await sessions.open(id, { readOnly: true })
    expect(read.integrity).toEqual({ state: 'signed', lines: 421, unsignedPrefix: 0 })
    expect(seqs(read)).toEqual(Array.from({ length: 421 }, (_, i) => i))
    await sessions.close(read)
    // Opened for writing from the last checkpoint: the head, every closed segment, verifies in the background.
    const session = await sessions.open(id)
    expect(session.firstSeq).toBe(lastCheckpoint)
    await headChecked(session)
    expect(session.integrity.state).toBe('signed')
    await sessions.close(session)
  })

  it('a long goal across many segments, resumed again and again, equals a whole replay', async () => {
    const dir = await tempDir()
    let { sessions } = await launch(dir, { segmentBytes: SEGMENT })
    const { id, file } = await written(sessions, dir, 100, 10)
    let next = 101
    for (let round = 0; round < 5; round++) {
      ;({ sessions } = await launch(dir, { segmentBytes: SEGMENT }))
      const session = await sessions.open(id)
      for (let k = 0; k < 60; k++, next++) {
        session.append('test/item', { i: next, text: 'y'.repeat(40) })
        if (next % 15 === 0) sessions.checkpoint(session, 'interval')
      }
      await sessions.close(session)
    }
    expect((await segmentNames(file)).length).toBeGreaterThan(8)
    const whole = await sessions.open(id, { readOnly: true })
    expect(whole.integrity.state).toBe('signed')
    const items = whole.records.filter((record) => record.type === 'test/item').map((record) => (record.data as { i: number }).i)
    expect(items).toEqual(Array.from({ length: next - 1 }, (_, i) => i + 1))
    expect(seqs(whole)).toEqual(Array.from({ length: whole.records.length }, (_, i) => i))
    await sessions.close(whole)
    const tail = await sessions.open(id)
    expect(tail.records).toEqual(whole.records.slice(tail.firstSeq))
    await headChecked(tail)
    expect(tail.integrity.state).toBe('signed')
  })

  it('removes every segment and the index with the log, and its version changes with any segment', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir, { segmentBytes: SEGMENT })
    const { id, file } = await written(sessions, dir, 200, 20)
    const store = new JsonlFileStore(dir, { segmentBytes: SEGMENT })
    const before = await store.version(id)
    const [first] = await segmentNames(file)
    // A touch of a closed segment that puts its times back still changes its ctime.
    const info = await fs.stat(first)
    await fs.utimes(first, info.atime, info.mtime)
    expect((await store.version(id)).token).not.toBe(before.token)
    await store.remove(id)
    expect((await fs.readdir(dir)).filter((name) => name.startsWith(id))).toEqual([])
  })
})

describe('tampering with a log kept in segments', () => {
  async function segmented() {
    const dir = await tempDir()
    const app = await launch(dir, { segmentBytes: SEGMENT })
    const { sessions } = app
    const { id, file } = await written(sessions, dir, 300, 20)
    const names = await segmentNames(file)
    return { dir, app, sessions, id, file, names }
  }

  /** Replaces one byte of a record's text in `name` by another, keeping its length. */
  async function editInside(name: string) {
    const text = await fs.readFile(name, 'utf8')
    const at = text.indexOf('xxxxx', text.indexOf('\n') + 1)
    await fs.writeFile(name, `${text.slice(0, at)}z${text.slice(at + 1)}`)
  }

  it('an edit inside a closed segment: a whole read is tampered there and names the segment; the head check of a writable open finds it', async () => {
    const { app, sessions, id, names } = await segmented()
    await editInside(names[2])
    const read = await sessions.open(id, { readOnly: true })
    expect(read.integrity.state).toBe('tampered')
    expect((read.integrity as { reason: string }).reason).toContain(path.basename(names[2]))
    await sessions.close(read)
    const found = new Promise<unknown>((resolve) => app.root.on('session/tampered', (_session, integrity) => resolve(integrity)))
    const session = await sessions.open(id)
    await headChecked(session)
    expect(session.integrity.state).toBe('tampered')
    expect(await found).toMatchObject({ state: 'tampered', reason: expect.stringContaining(path.basename(names[2])) })
    await sessions.close(session)
  })

  it('a removed closed segment, a segment cut or lengthened, lines moved across a boundary, an edited or removed index: tampered, and never opened for writing', async () => {
    const cases: [string, (s: Awaited<ReturnType<typeof segmented>>) => Promise<void>][] = [
      ['removed segment', async ({ names }) => fs.unlink(names[1])],
      ['removed last closed segment', async ({ names }) => fs.unlink(names[names.length - 2])],
      ['cut segment', async ({ names }) => {
        const text = await fs.readFile(names[1], 'utf8')
        await fs.writeFile(names[1], text.slice(0, text.lastIndexOf('\n', text.length - 2) + 1))
      }],
      ['forged line appended to a segment', async ({ names }) => fs.appendFile(names[1], '{"seq":99,"at":1,"type":"x","data":{}}\n')],
      ['line moved across a boundary', async ({ names }) => {
        const a = await fs.readFile(names[1], 'utf8')
        const cut = a.lastIndexOf('\n', a.length - 2) + 1
        await fs.writeFile(names[1], a.slice(0, cut))
        await fs.writeFile(names[2], a.slice(cut) + (await fs.readFile(names[2], 'utf8')))
      }],
      ['edited index', async ({ file }) => {
        const index = JSON.parse(await fs.readFile(`${file}.segments`, 'utf8'))
        index.segments[0].lastSeq += 1
        await fs.writeFile(`${file}.segments`, JSON.stringify(index))
      }],
      ['removed index', async ({ file }) => fs.unlink(`${file}.segments`)],
      ['index of another session', async ({ file, names }) => {
        await fs.writeFile(`${file}.segments`, await signedSegmentIndex('other', [{ n: 1, start: 0, length: (await fs.stat(names[0])).size, lastSeq: 1, mac: 'a'.repeat(64) }]))
      }],
    ]
    for (const [what, change] of cases) {
      const log = await segmented()
      await change(log)
      const read = await log.sessions.open(log.id, { readOnly: true })
      expect(read.integrity.state, what).toBe('tampered')
      await log.sessions.close(read)
      await expect(log.sessions.open(log.id), what).rejects.toMatchObject({ code: 'SESSION_TAMPERED' })
    }
  })
})

describe('a rollover interrupted', () => {
  /** A log with segments, closed; the state a rollover leaves after its link (and index) but before the new live file. */
  async function interrupted(withIndex: boolean) {
    const dir = await tempDir()
    const { sessions } = await launch(dir, { segmentBytes: SEGMENT })
    const { id, file } = await written(sessions, dir, 200, 20)
    const names = await segmentNames(file)
    const n = names.length
    const next = `${file}.${String(n).padStart(6, '0')}`
    const before = await wholeLog(file)
    await fs.link(file, next)
    if (withIndex) {
      const index = JSON.parse(await fs.readFile(`${file}.segments`, 'utf8')).segments
      const start = index.reduce((sum: number, s: { length: number }) => sum + s.length, 0)
      const lines = (await fs.readFile(file, 'utf8')).trimEnd().split('\n').map((line) => JSON.parse(line))
      const mac = [...lines].reverse().find((line) => line.mac).mac
      index.push({ n, start, length: (await fs.stat(file)).size, lastSeq: lines.at(-1).seq, mac })
      await fs.writeFile(`${file}.segments`, await signedSegmentIndex(id, index))
    }
    return { dir, sessions, id, file, before, next }
  }

  it('after the link, before the index: readers see the log once; the next writer removes the link', async () => {
    const { sessions, id, file, before, next } = await interrupted(false)
    const read = await sessions.open(id, { readOnly: true })
    expect(read.integrity.state).toBe('signed')
    await sessions.close(read)
    const session = await sessions.open(id)
    await headChecked(session)
    expect(session.integrity.state).toBe('signed')
    await sessions.close(session)
    await expect(fs.stat(next)).rejects.toMatchObject({ code: 'ENOENT' })
    expect((await wholeLog(file)).subarray(0, before.length).equals(before)).toBe(true)
  })

  it('after the index, before the new live file: readers see the log once; the next writer finishes the rollover', async () => {
    const { sessions, id, file, before, next } = await interrupted(true)
    const read = await sessions.open(id, { readOnly: true })
    expect(read.integrity.state).toBe('signed')
    await sessions.close(read)
    const session = await sessions.open(id)
    await headChecked(session)
    expect(session.integrity.state).toBe('signed')
    session.append('test/item', { i: 1000 })
    await sessions.close(session)
    expect((await fs.stat(next)).size).toBe((await fs.readFile(next)).length)
    expect((await fs.readFile(next)).equals(before.subarray(before.length - (await fs.stat(next)).size))).toBe(true)
    const whole = await wholeLog(file)
    expect(whole.subarray(0, before.length).equals(before)).toBe(true)
    const again = await sessions.open(id, { readOnly: true })
    expect(again.integrity.state).toBe('signed')
    expect(again.records.at(-1)!.data).toEqual({ i: 1000 })
  })
})

describe('a rollover killed at any step', () => {
  it('killed before each of its file changes, the next open for writing leaves one consistent log: nothing lost, nothing twice', { timeout: 300_000 }, async () => {
    let finished = false
    for (let killAt = 1; !finished; killAt++) {
      expect(killAt, 'the rollover never finished').toBeLessThan(60)
      const dir = await tempDir()
      // Segments already, and a live one fuller than a segment: the child's checkpoint starts a new one.
      const app = await launch(dir, { segmentBytes: SEGMENT })
      const { id, file } = await written(app.sessions, dir, 200, 20)
      const filling = await app.sessions.open(id)
      for (let i = 0; i < 80; i++) filling.append('test/item', { i: 1000 + i, text: 'w'.repeat(40) })
      await app.sessions.close(filling)
      await app.fiber.dispose()
      const before = await wholeLog(file)
      const segmentsBefore = (await segmentNames(file)).length
      const child = spawn(process.execPath, [...nodeArgs(path.join(here, 'fixtures/rollover-kill-child.ts')), dir, id, String(killAt), TEST_KEY, String(SEGMENT)], { stdio: ['ignore', 'pipe', 'inherit'] })
      let out = ''
      child.stdout.on('data', (chunk) => (out += chunk))
      const [code, signal] = await once(child, 'exit')
      finished = code === 0
      if (finished) expect(out).toMatch(/^done after \d+ changes\n$/)
      else expect(signal, `step ${killAt}: ${out}`).toBe('SIGKILL')

      const { sessions } = await launch(dir, { segmentBytes: SEGMENT })
      const session = await sessions.open(id)
      await headChecked(session)
      expect(session.integrity.state, `killed before change ${killAt}`).toBe('signed')
      await sessions.close(session)
      const whole = await sessions.open(id, { readOnly: true })
      expect(whole.integrity.state, `killed before change ${killAt}`).toBe('signed')
      expect(seqs(whole)).toEqual(Array.from({ length: whole.records.length }, (_, i) => i))
      // What was there before, byte for byte; then the checkpoint and its record, both or neither.
      expect((await wholeLog(file)).subarray(0, before.length).equals(before), `killed before change ${killAt}`).toBe(true)
      const added = whole.records.slice(before.toString().trimEnd().split('\n').length).map((record) => record.type)
      expect([[], ['session/checkpoint', 'test/item']], `killed before change ${killAt}`).toContainEqual(added)
      // One more segment or none; no temp file left.
      expect([segmentsBefore, segmentsBefore + 1]).toContain((await segmentNames(file)).length)
      if (finished) expect((await segmentNames(file)).length).toBe(segmentsBefore + 1)
      expect((await fs.readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([])
      await sessions.close(whole)
    }
  })
})
