// Session persistence: append+flush throughput and replay throughput of ctx.sessions, each next to a raw
// baseline measured in the same run on the same disk. Run alone: node --import tsx bench/session.bench.ts
import { appendFileSync, closeSync, fsyncSync, openSync, readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { Context } from 'cordis'
import { sessionStack } from '@goalkeeper/test-kit'
import { median, payload, seconds, sessionAppend } from './session-figures.ts'

const ROUNDS = 3
const PER_RECORD = 300
const BATCHED = 3000
const BATCH = 100
const REPLAY_RECORDS = 100_000
const TARGET = 0.5
const SMALL_BATCH = 10

/** Records/s of the bare minimum: serialise, appendFileSync and fsyncSync every `batch` records. */
function rawAppend(dir: string, count: number, batch: number): number {
  const file = path.join(dir, `raw-${process.hrtime.bigint()}.jsonl`)
  const fd = openSync(file, 'a')
  const start = process.hrtime.bigint()
  for (let i = 0; i < count; i++) {
    appendFileSync(fd, `${JSON.stringify({ seq: i, at: Date.now(), type: 'tool/result', data: payload(i) })}\n`)
    if ((i + 1) % batch === 0) fsyncSync(fd)
  }
  const elapsed = seconds(start)
  closeSync(fd)
  return count / elapsed
}

/** Records/s of reading the file and JSON.parse of every line, nothing else. */
function rawReplay(file: string): number {
  const start = process.hrtime.bigint()
  const lines = readFileSync(file, 'utf8').split('\n')
  let parsed = 0
  for (const line of lines) {
    if (!line) continue
    JSON.parse(line)
    parsed++
  }
  return parsed / seconds(start)
}

/** A session of `REPLAY_RECORDS` tool results in log `version`, flushed every `flushEvery` records (0: never). */
async function bigLog(root: Context, dir: string, version: 1 | 2, flushEvery: number): Promise<{ id: string; file: string }> {
  const writer = new Context()
  const fiber = await writer.plugin(sessionStack, { dir: path.join(dir, 'sessions'), logVersion: version })
  try {
    const big = await writer.sessions.create({ cwd: dir })
    for (let i = 1; i < REPLAY_RECORDS; i++) {
      big.append('tool/result', payload(i))
      if (flushEvery && i % flushEvery === 0) await writer.sessions.flush(big)
    }
    await writer.sessions.close(big)
    return { id: big.id, file: big.file }
  } finally {
    await fiber.dispose()
  }
}

async function sessionReplay(root: Context, id: string, readOnly: boolean): Promise<number> {
  const start = process.hrtime.bigint()
  const session = await root.sessions.open(id, { readOnly })
  const rate = session.records.length / seconds(start)
  await root.sessions.close(session)
  return rate
}

async function compare(label: string, raw: () => number, ours: () => Promise<number>) {
  raw()
  await ours() // warm-up: JIT and file-system caches should favour neither side
  const raws: number[] = []
  const oursRates: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    raws.push(raw())
    oursRates.push(await ours())
  }
  return { label, raw: median(raws), ours: median(oursRates) }
}

type Row = Awaited<ReturnType<typeof compare>>

function report(row: Row, target?: number) {
  const ratio = row.ours / row.raw
  const verdict = target === undefined ? '(no target)' : ratio >= target ? `target >= ${target * 100}%: OK` : `target >= ${target * 100}%: MISSED`
  console.log(`${row.label.padEnd(34)} sessions ${row.ours.toFixed(0).padStart(9)} rec/s   raw ${row.raw.toFixed(0).padStart(9)} rec/s   ratio ${(ratio * 100).toFixed(0).padStart(4)}%  ${verdict}`)
}

export async function run() {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-bench-'))
  const root = new Context()
  const fiber = await root.plugin(sessionStack, { dir: path.join(dir, 'sessions') })
  try {
    const perRecord = await compare('append + flush every record', () => rawAppend(dir, PER_RECORD, 1), () => sessionAppend(root, PER_RECORD, 1))
    const batched = await compare(`append + flush every ${BATCH} records`, () => rawAppend(dir, BATCHED, BATCH), () => sessionAppend(root, BATCHED, BATCH))

    // Written as new sessions are (log version 2, one mac per batch: here a batch per background write of
    // about 1 MiB), then as per line (version 1, sessions from before), then version 2 flushed every 10
    // records (a batch per flush, about what a tool step writes).
    const big = await bigLog(root, dir, 2, 0)
    const size = (await fs.stat(big.file)).size
    const replay = await compare(`replay ${REPLAY_RECORDS} records, read-only`, () => rawReplay(big.file), () => sessionReplay(root, big.id, true))
    const replayWritable = await compare(`replay ${REPLAY_RECORDS} records, writable`, () => rawReplay(big.file), () => sessionReplay(root, big.id, false))
    const perLine = await bigLog(root, dir, 1, 0)
    const replayV1 = await compare(`replay ${REPLAY_RECORDS}, v1 (mac per line)`, () => rawReplay(perLine.file), () => sessionReplay(root, perLine.id, true))
    const small = await bigLog(root, dir, 2, SMALL_BATCH)
    const replaySmall = await compare(`replay ${REPLAY_RECORDS}, v2, ${SMALL_BATCH} a batch`, () => rawReplay(small.file), () => sessionReplay(root, small.id, true))

    console.log(`session (median of ${ROUNDS} alternating rounds; replay file ${(size / 2 ** 20).toFixed(1)} MiB)`)
    report(perRecord)
    report(batched, TARGET)
    report(replay, TARGET)
    report(replayWritable)
    report(replayV1)
    report(replaySmall)
    return { perRecord, batched, replay, replayWritable, replayV1, replaySmall }
  } finally {
    await fiber.dispose()
    await fs.rm(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
}
