// `show` of a whole log of about 100 MiB (version 2, a batch per turn, no checkpoint): the transcript made
// from a holding open (`open(id, { readOnly: true })` then `renderTranscript(session.records)`, what show
// did before) against the transcript made as the log streams (`read(id)` fed to `Transcript`, what show does
// now), each in a fresh child process reporting its wall time, CPU time and peak resident memory (maxRSS).
// The transcript's lines go to a sink, not a terminal. The machine is shared: compare the ratios.
// Run alone: node --import tsx bench/show-stream.bench.ts [MiB]
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Context } from 'cordis'
import { sessionStack } from '@goalkeeper/test-kit'
import { BatchSigner, Signer } from '../packages/session/src/integrity.ts'
import { renderTranscript, Transcript } from '../packages/host/src/commands/show/transcript.ts'

const here = fileURLToPath(import.meta.url)
const ID = '20261202-000000-show01'
const text = (turn: number) => `Round ${turn}: ${'checked the workspace, wrote the progress file and read it back; '.repeat(22)}`.slice(0, 1400)

/** A log of about `bytes`, signed as the service signs version 2 (one batch per turn), with its seal. */
async function generate(dir: string, key: Buffer, bytes: number): Promise<{ records: number; size: number }> {
  const signer = new Signer(key)
  const file = path.join(dir, `${ID}.jsonl`)
  const handle = await fs.open(file, 'w')
  const batches = new BatchSigner(signer, signer.seed(ID))
  const at = Date.UTC(2026, 11, 2)
  const header = JSON.stringify({ seq: 0, at, type: 'session/header', data: { version: 2, id: ID, createdAt: at, cwd: '/work', sealed: true, keyId: signer.keyId } })
  let size = 0
  const write = async (lines: string[]) => {
    const chunk = lines.join('')
    size += Buffer.byteLength(chunk)
    await handle.write(chunk)
  }
  await write(batches.sign([`${header}\n`], 0, 0))
  let seq = 1
  for (let turn = 1; size < bytes; turn++) {
    const message = { id: `m${turn}`, content: [{ type: 'text', text: `question ${turn}` }], source: { kind: 'human' } }
    const lines = [
      { type: 'turn/start', data: { turn } },
      { type: 'user/message', data: message },
      { type: 'assistant/message', data: { turn, step: 1, text: text(turn), toolCalls: [], usage: { inputTokens: 900, outputTokens: 300 } } },
      { type: 'turn/end', data: { turn, outcome: { kind: 'completed' } } },
    ].map((record, i) => `${JSON.stringify({ seq: seq + i, at: at + turn, ...record })}\n`)
    await write(batches.sign(lines, seq, size))
    seq += lines.length
  }
  await handle.close()
  await fs.writeFile(`${file}.seal`, signer.seal(ID, seq - 1, batches.last))
  return { records: seq, size }
}

/** One way of showing the log, in this (child) process: prints its figures as JSON. */
async function child(mode: string, dir: string, keyHex: string) {
  const ctx = new Context()
  const fiber = await ctx.plugin(sessionStack, { dir, key: keyHex, maxOpenBytes: 2 ** 32 })
  let lines = 0
  const sink = (out: string[]) => (lines += out.length)
  const start = process.hrtime.bigint()
  const cpu = process.cpuUsage()
  if (mode === 'holding') {
    const session = await ctx.sessions.open(ID, { readOnly: true })
    sink(renderTranscript(session.records, { full: false, integrity: session.integrity }))
    await ctx.sessions.close(session)
  } else {
    const reading = await ctx.sessions.read(ID)
    const transcript = new Transcript({ full: false })
    for await (const record of reading) sink(transcript.add(record, reading.integrity))
    sink(transcript.end(reading.integrity))
  }
  const wall = Number(process.hrtime.bigint() - start) / 1e6
  const used = process.cpuUsage(cpu)
  console.log(JSON.stringify({ mode, wall, cpu: (used.user + used.system) / 1000, rssMiB: process.resourceUsage().maxRSS / 1024, lines }))
  await fiber.dispose()
}

async function main() {
  const mib = Number(process.argv[2] ?? 100)
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'goalkeeper-show-bench-'))
  try {
    const key = randomBytes(32)
    const made = await generate(dir, key, mib * 2 ** 20)
    console.log(`log: ${(made.size / 2 ** 20).toFixed(1)} MiB, ${made.records} records (version 2)`)
    const figures: Record<string, { wall: number; cpu: number; rssMiB: number; lines: number }> = {}
    for (const mode of ['holding', 'streaming']) {
      const result = spawnSync(process.execPath, ['--import', 'tsx', here, 'child', mode, dir, key.toString('hex')], { encoding: 'utf8', maxBuffer: 1 << 24 })
      const line = result.stdout.split('\n').find((l) => l.startsWith('{'))
      if (!line) throw new Error(`${mode}: ${result.stderr}`)
      figures[mode] = JSON.parse(line)
      const f = figures[mode]
      console.log(`${mode.padEnd(9)}  wall ${f.wall.toFixed(0)} ms  cpu ${f.cpu.toFixed(0)} ms  peak rss ${f.rssMiB.toFixed(0)} MiB  lines ${f.lines}`)
    }
    const { holding, streaming } = figures
    if (holding.lines !== streaming.lines) throw new Error('the two transcripts differ in length')
    console.log(`streaming / holding: wall ${(streaming.wall / holding.wall).toFixed(2)}  cpu ${(streaming.cpu / holding.cpu).toFixed(2)}  peak rss ${(streaming.rssMiB / holding.rssMiB).toFixed(2)}`)
  } finally {
    await fs.rm(dir, { recursive: true, force: true })
  }
}

if (process.argv[2] === 'child') await child(process.argv[3], process.argv[4], process.argv[5])
else await main()
