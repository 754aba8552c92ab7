// Opening a long session for writing: from its last checkpoint (the checkpoint index) against the whole log.
// A synthetic log of tool results with a checkpoint every 10,000 records is written once; each open runs in a
// fresh child process, which reports the time, the heap in use once open and its peak RSS.
// Run alone: node --import tsx bench/checkpoint.bench.ts [records] [--quick]
import { spawnSync } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { payload, withSessions } from './session-figures.ts'

const here = fileURLToPath(import.meta.url)
const QUICK = process.argv.includes('--quick')
const EVERY = 10_000
// Sessions this large may open and grow.
const MAX_BYTES = 2 ** 32
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6
const mib = (bytes: number) => bytes / 2 ** 20

async function childOpen(dir: string, id: string, from: 'checkpoint' | 'start') {
  await withSessions(dir, MAX_BYTES, async (ctx) => {
    const heapBefore = process.memoryUsage().heapUsed
    const start = process.hrtime.bigint()
    const session = await ctx.sessions.open(id, { from })
    const elapsed = ms(start)
    const heap = process.memoryUsage().heapUsed - heapBefore
    await ctx.sessions.close(session)
    // Opened again in the same process: without the first open's loading of code and key.
    const again = process.hrtime.bigint()
    await ctx.sessions.close(await ctx.sessions.open(id, { from }))
    console.log(JSON.stringify({ ms: elapsed, warmMs: ms(again), records: session.records.length, heapMiB: mib(heap), maxRssMiB: process.resourceUsage().maxRSS / 1024 }))
  })
}

function child(args: string[]): any {
  const result = spawnSync(process.execPath, ['--import', 'tsx', here, 'open', ...args], { encoding: 'utf8', maxBuffer: 1 << 24 })
  try {
    return JSON.parse(result.stdout.trim().split('\n').at(-1)!)
  } catch {
    return { error: `exit ${result.status}: ${result.stderr.trim().split('\n').slice(-3).join(' | ')}` }
  }
}

async function write(dir: string, records: number): Promise<string> {
  return withSessions(dir, MAX_BYTES, async (ctx) => {
    const off = ctx.sessions.provideCheckpoint('bench', () => ({ note: 'a small part' }))
    const session = await ctx.sessions.create({ cwd: dir })
    for (let i = 1; i < records; i++) {
      session.append('tool/result', payload(i))
      if (i % EVERY === 0) {
        ctx.sessions.checkpoint(session, 'interval')
        await ctx.sessions.flush(session)
      }
    }
    await ctx.sessions.close(session)
    off()
    return session.id
  })
}

export async function run(records = QUICK ? 20_000 : 1_000_000) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-checkpoint-'))
  try {
    const id = await write(dir, records)
    const size = (await fs.stat(path.join(dir, 'sessions', `${id}.jsonl`))).size
    console.log(`open for writing, ${records.toLocaleString('en')} records (${mib(size).toFixed(0)} MiB), a checkpoint every ${EVERY.toLocaleString('en')}`)
    for (const from of ['checkpoint', 'start'] as const) {
      const r = child([dir, id, from])
      const name = from === 'checkpoint' ? 'from the last checkpoint' : 'whole log'
      if (r.error) console.log(`  ${name.padEnd(26)} failed: ${r.error}`)
      else console.log(`  ${name.padEnd(26)} ${r.ms.toFixed(0).padStart(7)} ms (again ${r.warmMs.toFixed(0).padStart(6)} ms)  ${String(r.records).padStart(8)} records held  heap +${r.heapMiB.toFixed(0).padStart(4)} MiB  peak RSS ${r.maxRssMiB.toFixed(0).padStart(5)} MiB`)
    }
  } finally {
    await fs.rm(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2).filter((arg) => arg !== '--quick')
  if (args[0] === 'open') await childOpen(args[1], args[2], args[3] as 'checkpoint' | 'start')
  else await run(args[0] ? Number(args[0]) : undefined)
}
