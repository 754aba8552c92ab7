// Sessions of 100 MiB, 1 GiB and 2 GiB: opening for writing (from the last checkpoint), `show --tail` (the
// last turn, read back from the last checkpoint) and, for the smallest, the whole read, each in a fresh child
// process reporting its time, the peak heap it added (sampled while it ran) and the records it held; and how
// long the background check of the log before the checkpoint took after the writable open. CPU time (main
// thread and the pool) is given beside the wall time: it is the steadier figure on a shared machine.
// Each log is generated once per run and log version, signed as the session service signs them (version 2:
// one mac per turn; version 1: per line), turns of four records of about 545 bytes on average, a checkpoint
// every 10,000 records, its signed index and the seal, in a temp dir that is removed before the next log is
// made: at most one log is on disk at a time. Logs over 128 MiB are sparse (see `generate`): their opens are
// measured, their whole read and head check are not.
// Times are also given against the same open of the first (smallest, version 2) log of the run.
// Run alone: node --import tsx bench/long-log.bench.ts [MiB ...] [--quick]
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Context } from 'cordis'
import { sessionStack } from '@goalkeeper/test-kit'
import { BatchSigner, signCheckpointEntry, signSegmentIndex, Signer } from '../packages/session/src/integrity.ts'

const here = fileURLToPath(import.meta.url)
const QUICK = process.argv.includes('--quick')
const EVERY = 10_000
const ID = '20261201-000000-bench1'
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6
const mib = (bytes: number) => bytes / 2 ** 20
/** The assistant's answer of a turn: 1,400 characters (records of about 545 bytes), or 700 (about 400 bytes). */
const answer = (turn: number, length: number) => `Round ${turn}: ${'checked the workspace, wrote the progress file and read it back; '.repeat(22)}`.slice(0, length)
/** Segments of the JSONL store's default size, for the logs over 128 MiB. */
const SEGMENT = 64 * 2 ** 20

/** Records after the last checkpoint (what a writable open reads), and signed records written before it. */
const TAIL_RECORDS = 9_000
const BEFORE_BYTES = 3 * 2 ** 20

/**
 * Writes a log of about `bytes` bytes of log `version`, signed as the session service signs them: line by
 * line (1), or one mac per turn (2, a batch per turn as a session flushed at every turn end writes them,
 * each checkpoint starting a batch). `sparse`: only the header, the last BEFORE_BYTES before the last
 * checkpoint and the tail are written; the rest is a hole (no disk used), which a whole read would refuse,
 * and which the opens measured here never read. The seqs after the hole are those of a log of that size.
 * Returns the record count and size.
 */
async function generate(dir: string, key: Buffer, bytes: number, sparse: boolean, version: 1 | 2, short = false): Promise<{ records: number; size: number; segments: number }> {
  const answerLength = short ? 700 : 1400
  const signer = new Signer(key)
  const file = path.join(dir, 'sessions', `${ID}.jsonl`)
  await fs.mkdir(path.dirname(file), { recursive: true })
  const handle = await fs.open(file, 'w')
  let entry: { seq: number; offset: number; mac: string; prefix: number } | undefined
  // Version 2: the lines of a turn are signed together when it ends; a checkpoint's entry is placed then.
  const batches = version === 2 ? new BatchSigner(signer, signer.seed(ID), { onHead: (seq, offset, mac) => (entry = { seq, offset, mac, prefix: 0 }) }) : undefined
  let mac = signer.seed(ID)
  let seq = 0
  /** What is on disk, what is signed and not yet written, the lines of the batch under way (version 2). */
  let written = 0
  let signed: string[] = []
  let signedBytes = 0
  let open: string[] = []
  let openBytes = 0
  const size = () => written + signedBytes + openBytes
  const at = Date.UTC(2026, 11, 1)
  const put = (type: string, data: unknown) => {
    const body = `{"seq":${seq},"at":${at + seq},"type":${JSON.stringify(type)},"data":${JSON.stringify(data)}}`
    if (batches) {
      if (type === 'session/checkpoint') batches.markHead(seq)
      open.push(`${body}\n`)
      openBytes += Buffer.byteLength(body) + 1
    } else {
      if (type === 'session/checkpoint') entry = { seq, offset: size(), mac, prefix: 0 }
      const line = signer.sign(mac, body)
      mac = line.mac
      signed.push(`${line.line}\n`)
      signedBytes += Buffer.byteLength(line.line) + 1
    }
    seq++
  }
  /** Ends the batch under way (version 2): its lines are signed together. */
  const endBatch = () => {
    if (!batches || !open.length) return
    const lines = batches.sign(open, seq - open.length, written + signedBytes)
    mac = batches.last
    for (const line of lines) signedBytes += Buffer.byteLength(line)
    signed.push(...lines)
    open = []
    openBytes = 0
  }
  const drain = async () => {
    endBatch()
    const text = Buffer.from(signed.join(''))
    await handle.write(text, 0, text.length, written)
    written += text.length
    signed = []
    signedBytes = 0
  }
  const checkpoint = () => put('session/checkpoint', { reason: 'interval', parts: { summary: { title: 'Round 1 of the goal: keep the progress log.' } } })
  let turn = 0
  let holeEnd = 0
  const oneTurn = () => {
    turn++
    put('turn/start', { turn })
    put('user/message', { id: `m${turn}`, content: [{ type: 'text', text: `Round ${turn} of the goal: keep the progress log.` }], source: { kind: 'human' } })
    put('assistant/message', { turn, step: 1, text: answer(turn, answerLength), toolCalls: [] })
    put('turn/end', { turn, outcome: { kind: 'completed' } })
    endBatch()
  }
  // The header is a batch of its own (version 2), as the service writes it at create.
  put('session/header', { version, id: ID, createdAt: at, cwd: dir, sealed: true, keyId: signer.keyId })
  await drain()
  if (sparse) {
    // Measured on a whole log: a turn of four records is about 2,200 bytes here.
    const perRecord = short ? 400 : 545
    const skipped = Math.floor((bytes - BEFORE_BYTES - TAIL_RECORDS * perRecord) / perRecord)
    // A line the hole ends with (a batch of one), whose mac the first written line after it chains from.
    written += (skipped - 1) * perRecord
    holeEnd = written
    seq += skipped - 1
    turn = Math.floor(seq / 4)
    mac = randomBytes(32).toString('hex')
    if (batches) batches.last = mac
    signed.push(`{"seq":${seq},"at":${at + seq},"type":"test/hole","data":{},"mac":"${mac}"}\n`)
    signedBytes = Buffer.byteLength(signed[0])
    seq++
    const end = size() + BEFORE_BYTES
    while (size() < end) oneTurn()
  } else {
    let since = 0
    while (size() < bytes - TAIL_RECORDS * 545) {
      oneTurn()
      since += 4
      if (since >= EVERY) {
        checkpoint()
        since = 0
      }
      if (signedBytes > 1 << 20) await drain()
    }
  }
  // The last checkpoint, and the turns after it.
  checkpoint()
  for (let i = 0; i < TAIL_RECORDS / 4; i++) oneTurn()
  await drain()
  await handle.close()
  await fs.writeFile(`${file}.seal`, signer.seal(ID, seq - 1, mac))
  await fs.writeFile(`${file}.checkpoint`, signCheckpointEntry(signer, ID, entry!))
  const segments = sparse && version === 2 ? await splitSparse(file, signer, entry!.offset, holeEnd, written) : 0
  return { records: seq, size: written, segments }
}

/**
 * Splits a sparse log as the JSONL store keeps a long one: closed segments of SEGMENT bytes up to the last
 * checkpoint, which starts the live file (as it does right after a rollover), and their signed index. The
 * closed segments stay sparse: only the header and the bytes from `holeEnd` on are copied into them. Their
 * boundaries fall in the hole, so their index entries carry no real last seq and mac: nothing measured here
 * reads them (the writable open and `show --tail` read the header and the live file; the head check, which
 * would, is not measured on sparse logs). Returns the number of closed segments.
 */
async function splitSparse(file: string, signer: Signer, liveStart: number, holeEnd: number, size: number): Promise<number> {
  const source = await fs.open(file, 'r')
  const copy = async (from: number, to: number, target: fs.FileHandle, at: number) => {
    const buffer = Buffer.alloc(to - from)
    await source.read(buffer, 0, buffer.length, from)
    await target.write(buffer, 0, buffer.length, at)
  }
  const entries = []
  const header = Buffer.alloc(4096)
  await source.read(header, 0, header.length, 0)
  const headerEnd = header.indexOf(10) + 1
  for (let n = 1, start = 0; start < liveStart; n++, start += SEGMENT) {
    const end = Math.min(start + SEGMENT, liveStart)
    const segment = await fs.open(`${file}.${String(n).padStart(6, '0')}`, 'w')
    await segment.truncate(end - start)
    if (start === 0) await copy(0, headerEnd, segment, 0)
    if (end > holeEnd) await copy(Math.max(start, holeEnd), end, segment, Math.max(start, holeEnd) - start)
    await segment.close()
    entries.push({ n, start, length: end - start, lastSeq: 0, mac: '0'.repeat(64) })
  }
  const live = await fs.open(`${file}.live`, 'w')
  await copy(liveStart, size, live, 0)
  await live.close()
  await source.close()
  await fs.rename(`${file}.live`, file)
  await fs.writeFile(`${file}.segments`, signSegmentIndex(signer, ID, entries))
  return entries.length
}

type Mode = 'write' | 'tail' | 'back' | 'whole'

/** One open in this (child) process: time, peak heap added, records held, and for `write` the head check's time. */
async function childOpen(dir: string, keyHex: string, mode: Mode, waitHead: boolean) {
  const ctx = new Context()
  let headDone: (() => void) | undefined
  const head = new Promise<void>((resolve) => (headDone = resolve))
  ctx.logger.exporter({ levels: { default: 3 }, export: (message) => {
    if (String(message.args?.[0] ?? '').includes('the log before its last checkpoint')) headDone!()
  } })
  const fiber = await ctx.plugin(sessionStack, { dir: path.join(dir, 'sessions'), key: keyHex, maxOpenBytes: 2 ** 32, maxSessionBytes: 2 ** 32 })
  // The key is loaded once before measuring, as a running host has it.
  await ctx.sessions.signingKey()
  globalThis.gc?.()
  const heapBefore = process.memoryUsage().heapUsed
  let peak = heapBefore
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 5)
  const cpu = process.cpuUsage()
  const start = process.hrtime.bigint()
  const options = { write: {}, tail: { readOnly: true, from: 'checkpoint', turns: 1 }, back: { readOnly: true, from: 'checkpoint', turns: TAIL_RECORDS / 4 + 200 }, whole: { readOnly: true } } as const
  const session = await ctx.sessions.open(ID, options[mode])
  const elapsed = ms(start)
  const used = process.cpuUsage(cpu)
  clearInterval(sampler)
  peak = Math.max(peak, process.memoryUsage().heapUsed)
  let headMs: number | undefined
  if (mode === 'write' && waitHead) {
    await head
    headMs = ms(start)
  }
  const result = { ms: elapsed, cpuMs: (used.user + used.system) / 1000, peakHeapMiB: mib(peak - heapBefore), records: session.records.length, firstSeq: session.firstSeq, integrity: session.integrity.state, headMs }
  await ctx.sessions.close(session)
  await fiber.dispose()
  console.log(JSON.stringify(result))
}

function child(args: string[]): any {
  const result = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', here, 'open', ...args], { encoding: 'utf8', maxBuffer: 1 << 24 })
  try {
    return JSON.parse(result.stdout.trim().split('\n').at(-1)!)
  } catch {
    return { error: `exit ${result.status}: ${result.stderr.trim().split('\n').slice(-3).join(' | ')}` }
  }
}

export async function run(sizes = QUICK ? [16] : [100, 1024, 2048]) {
  const key = randomBytes(32)
  const baseline: Partial<Record<Mode, number>> = {}
  console.log(`sessions of ${sizes.map((size) => `${size} MiB`).join(', ')}: a checkpoint every ${EVERY.toLocaleString('en')} records, the last turn after the last one`)
  console.log('log version 2 (one mac per turn), then 1 (a mac per line), of each size')
  for (const size of sizes) {
    for (const version of [2, 1] as const) {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-long-log-'))
      try {
        const made = process.hrtime.bigint()
        // Logs over 128 MiB are sparse: written whole, they would take the run's time in signing alone.
        const sparse = size > 128
        // The 2 GiB log of shorter records (about 400 bytes): over 5,000,000 of them.
        const { records, size: bytes, segments } = await generate(dir, key, size * 2 ** 20, sparse, version, size >= 2048)
        const used = (await fs.readdir(path.join(dir, 'sessions')).then((names) => Promise.all(names.filter((name) => name.startsWith(`${ID}.jsonl`)).map((name) => fs.stat(path.join(dir, 'sessions', name)))))).reduce((sum, info) => sum + info.blocks * 512, 0)
        const kept = segments ? `, ${segments} closed segments of ${mib(SEGMENT)} MiB and the live one` : ', one file'
        console.log(`${mib(bytes).toFixed(0)} MiB, version ${version}, ${records.toLocaleString('en')} records${kept}${sparse ? `, sparse (${mib(used).toFixed(0)} MiB on disk)` : ''} (generated in ${(ms(made) / 1000).toFixed(0)} s)`)
        const modes: [Mode, string][] = [['write', 'open for writing'], ['tail', 'show --tail (last turn)'], ['back', `show --tail ${TAIL_RECORDS / 4 + 200}`]]
        if (!sparse) modes.push(['whole', 'show (whole log)'])
        for (const [mode, name] of modes) {
          const r = child([dir, key.toString('hex'), mode, mode === 'write' && !sparse ? 'head' : ''])
          if (r.error) {
            console.log(`  ${name.padEnd(24)} failed: ${r.error}`)
            continue
          }
          const head = r.headMs === undefined ? '' : `  head verified after ${(r.headMs / 1000).toFixed(1)} s`
          // Against the same open of the first log of this run (the smallest, version 2): what the length of
          // the log costs, and at the smallest size what version 1 costs against 2.
          baseline[mode] ??= r.ms
          const ratio = `${(r.ms / baseline[mode]!).toFixed(2)}x`
          console.log(`  ${name.padEnd(24)} ${r.ms.toFixed(0).padStart(7)} ms (${ratio.padStart(5)}), CPU ${r.cpuMs.toFixed(0).padStart(6)} ms  peak heap +${r.peakHeapMiB.toFixed(0).padStart(4)} MiB  ${String(r.records).padStart(8)} records held  ${r.integrity}${head}`)
          // Every open must start where it should: a log not read from its tail gives no figure.
          if (r.integrity !== 'signed' || (mode !== 'whole' && r.firstSeq === 0)) throw new Error(`${name} of the version ${version} log: ${r.integrity}, first seq ${r.firstSeq}`)
        }
      } finally {
        await fs.rm(dir, { recursive: true, force: true })
      }
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2).filter((arg) => arg !== '--quick')
  if (args[0] === 'open') await childOpen(args[1], args[2], args[3] as Mode, args[4] === 'head')
  else await run(args.length ? args.map(Number) : undefined)
}
