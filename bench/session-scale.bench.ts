// Sessions at scale: open time and peak memory at 1k/100k/1M records (each open in a fresh child
// process, next to a raw read + JSON.parse of the same file in its own child), listing the 50 most
// recent of 1,000, 10,000 and 100,000 sessions (next to reading every log's tail), and 10,000 idle agents (open
// writable sessions in one process) under `ulimit -n 1024`.
// Run alone: node --import tsx bench/session-scale.bench.ts [open|list|agents] [--quick] [--sizes=1000,10000]
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { UserMessage } from '@goalkeeper/session'
import { median, payload, withSessions } from './session-figures.ts'

const here = fileURLToPath(import.meta.url)
const cli = path.resolve(path.dirname(here), '../dist/goalkeeper/goalkeeper.mjs')
// --quick: small sizes, to check that the bench runs (its figures mean little).
const QUICK = process.argv.includes('--quick')
const OPEN_SIZES = QUICK ? [1_000] : [1_000, 100_000, 1_000_000]
// --sizes=10000,100000: only these listing sizes (the 100,000 row alone takes minutes to set up).
const sizesArg = process.argv.find((arg) => arg.startsWith('--sizes='))
const LIST_SIZES = sizesArg ? sizesArg.slice('--sizes='.length).split(',').map(Number) : QUICK ? [1_000] : [1_000, 10_000, 100_000]
const LIST_ROWS = 50
const AGENTS = QUICK ? 500 : 10_000
const AGENT_FD_LIMIT = 1024
// Sessions this large may open and grow.
const MAX_BYTES = 2 ** 31

const human = (i: number): { message: UserMessage } => ({ message: { id: `input-${i}`, source: { kind: 'human' }, content: [{ type: 'text', text: `task ${i}` }] } })
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6

/** Runs this file as a child (`node --import tsx`), optionally under a shell `ulimit -n`; returns its last stdout line as JSON. */
function child(args: string[], fdLimit?: number): any {
  const node = [process.execPath, '--import', 'tsx', here, ...args]
  const quoted = node.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')
  const result = fdLimit ? spawnSync('sh', ['-c', `ulimit -n ${fdLimit} && exec ${quoted}`], { encoding: 'utf8', maxBuffer: 1 << 26 }) : spawnSync(node[0], node.slice(1), { encoding: 'utf8', maxBuffer: 1 << 26 })
  const lines = result.stdout.trim().split('\n')
  try {
    return JSON.parse(lines[lines.length - 1])
  } catch {
    return { error: `exit ${result.status}: ${(result.stderr || result.stdout).trim().split('\n').slice(-3).join(' | ')}` }
  }
}

// --- children -------------------------------------------------------------------------------------

async function childOpen(dir: string, id: string, mode: string) {
  const start = process.hrtime.bigint()
  let count = 0
  if (mode === 'raw') {
    const text = readFileSync(path.join(dir, 'sessions', `${id}.jsonl`), 'utf8')
    for (let at = 0, end = text.indexOf('\n'); end >= 0; at = end + 1, end = text.indexOf('\n', at)) {
      JSON.parse(text.slice(at, end))
      count++
    }
    console.log(JSON.stringify({ ms: ms(start), records: count, maxRssMiB: process.resourceUsage().maxRSS / 1024 }))
    return
  }
  await withSessions(dir, MAX_BYTES, async (ctx) => {
    try {
      const session = await ctx.sessions.open(id, { readOnly: mode === 'read' })
      count = session.records.length
      const elapsed = ms(start)
      console.log(JSON.stringify({ ms: elapsed, records: count, maxRssMiB: process.resourceUsage().maxRSS / 1024 }))
      await ctx.sessions.close(session)
    } catch (error) {
      console.log(JSON.stringify({ error: (error as Error).message.slice(0, 160) }))
    }
  })
}

async function childAgents(dir: string, count: number) {
  await withSessions(dir, MAX_BYTES, async (ctx) => {
    const start = process.hrtime.bigint()
    const open = []
    try {
      for (let i = 0; i < count; i++) {
        const session = await ctx.sessions.create({ cwd: dir })
        session.append('input/queued', human(i))
        await ctx.sessions.flush(session)
        open.push(session)
      }
      const created = ms(start)
      // Every agent idle, then each appends once more: the descriptors of the idle ones must be free.
      const again = process.hrtime.bigint()
      for (const session of open) session.append('turn/start', { turn: 1 })
      await Promise.all(open.map((session) => ctx.sessions.flush(session)))
      console.log(JSON.stringify({ ok: open.length, createMs: created, appendAllMs: ms(again) }))
    } catch (error) {
      console.log(JSON.stringify({ ok: open.length, error: (error as Error).message.slice(0, 160) }))
    }
  })
}

// --- rows -----------------------------------------------------------------------------------------

async function openRows() {
  console.log('open a session (each in a fresh child process; peak RSS of that process)')
  for (const records of OPEN_SIZES) {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-scale-open-'))
    try {
      const id = await withSessions(dir, MAX_BYTES, async (ctx) => {
        const session = await ctx.sessions.create({ cwd: dir })
        for (let i = 1; i < records; i++) {
          session.append('tool/result', payload(i))
          if (i % 20_000 === 0) await ctx.sessions.flush(session)
        }
        await ctx.sessions.close(session)
        return session.id
      })
      const size = (await fs.stat(path.join(dir, 'sessions', `${id}.jsonl`))).size
      const label = `${records.toLocaleString('en')} records (${(size / 2 ** 20).toFixed(0)} MiB)`
      for (const mode of ['raw', 'read', 'write']) {
        const runs = [child(['open', dir, id, mode])]
        if (records < 1_000_000) runs.push(child(['open', dir, id, mode]), child(['open', dir, id, mode]))
        const failed = runs.find((r) => r.error)
        const name = ({ raw: 'raw read + parse', read: 'open read-only', write: 'open writable' } as Record<string, string>)[mode]
        if (failed) console.log(`${label.padEnd(26)} ${name.padEnd(18)} failed: ${failed.error}`)
        else console.log(`${label.padEnd(26)} ${name.padEnd(18)} ${median(runs.map((r) => r.ms)).toFixed(0).padStart(7)} ms   peak RSS ${median(runs.map((r) => r.maxRssMiB)).toFixed(0).padStart(5)} MiB`)
      }
    } finally {
      await fs.rm(dir, { recursive: true, force: true })
    }
  }
}

/**
 * Writes `count` signed, sealed logs of six records straight into `dir` (as goalkeeper writes them,
 * without going through a writer, so 100,000 take seconds, not hours); no index. Ids, newest last.
 */
export async function writeLogs(dir: string, keyFile: string, count: number): Promise<string[]> {
  const { loadKey, Signer } = await import('../packages/session/src/integrity.ts')
  const { newSessionId } = await import('../packages/session/src/ids.ts')
  const signer = new Signer(await loadKey(keyFile))
  await fs.mkdir(dir, { recursive: true })
  const ids: string[] = []
  const base = Date.now() - count * 1000
  for (let i = 0; i < count; i += 256) {
    await Promise.all(Array.from({ length: Math.min(256, count - i) }, async (_, k) => {
      const at = base + (i + k) * 1000
      const id = `${newSessionId(at)}`
      ids[i + k] = id
      const records = [
        { type: 'session/header', data: { version: 1, id, createdAt: at, cwd: dir, sealed: true, keyId: signer.keyId } },
        { type: 'input/queued', data: human(i + k) },
        ...Array.from({ length: 4 }, (_, r) => ({ type: 'tool/result', data: payload(r) })),
      ]
      let mac = signer.seed(id)
      let text = ''
      records.forEach((record, seq) => {
        const signed = signer.sign(mac, JSON.stringify({ seq, at: at + seq, type: record.type, data: record.data }))
        mac = signed.mac
        text += `${signed.line}\n`
      })
      await fs.writeFile(path.join(dir, `${id}.jsonl`), text)
      await fs.writeFile(path.join(dir, `${id}.jsonl.seal`), signer.seal(id, records.length - 1, mac))
    }))
  }
  return ids
}

/** Reads the last 4 KiB of every log, 16 at a time: what a listing that only read the logs' tails would cost. */
async function readTails(dir: string, ids: readonly string[]): Promise<number> {
  const start = process.hrtime.bigint()
  let next = 0
  const worker = async () => {
    while (next < ids.length) {
      const handle = await fs.open(path.join(dir, `${ids[next++]}.jsonl`), 'r')
      const { size } = await handle.stat()
      await handle.read(Buffer.alloc(4096), 0, 4096, Math.max(0, size - 4096))
      await handle.close()
    }
  }
  await Promise.all(Array.from({ length: 16 }, worker))
  return ms(start)
}

async function listRows() {
  console.log(`list the ${LIST_ROWS} most recent sessions (in process; the first listing builds the index the later ones use)`)
  for (const count of LIST_SIZES) {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-scale-list-'))
    try {
      const sessionsDir = path.join(dir, 'sessions')
      await withSessions(dir, MAX_BYTES, async (ctx) => void (await ctx.sessions.signingKey()))
      const ids = await writeLogs(sessionsDir, path.join(dir, 'session.key'), count)
      const tails = median([await readTails(sessionsDir, ids), await readTails(sessionsDir, ids), await readTails(sessionsDir, ids)])
      const times = await withSessions(dir, MAX_BYTES, async (ctx) => {
        const recent = async () => {
          const start = process.hrtime.bigint()
          // main before the index had no recent(): the CLI listed every session and showed the first rows.
          const listed = ctx.sessions.recent ? (await ctx.sessions.recent({ limit: LIST_ROWS })).sessions : (await ctx.sessions.list()).slice(0, LIST_ROWS)
          if (listed[0]?.id !== ids[ids.length - 1]) throw new Error(`listed ${listed[0]?.id} first, not ${ids[ids.length - 1]}`)
          return ms(start)
        }
        const first = await recent()
        const later = median([await recent(), await recent(), await recent()])
        const start = process.hrtime.bigint()
        await ctx.sessions.list()
        return { first, later, all: ms(start) }
      })
      const label = `${count.toLocaleString('en')} sessions`.padEnd(16)
      console.log(`${label} first ${times.first.toFixed(0).padStart(6)} ms (${(times.first / tails).toFixed(1)}x reading the tails, ${tails.toFixed(0)} ms)   later ${times.later.toFixed(0).padStart(5)} ms   whole listing (every log checked) ${times.all.toFixed(0).padStart(6)} ms`)
      if (existsSync(cli)) {
        // The installed CLI (npm run build), as a person runs it: the default 20 rows, goal column included.
        await fs.writeFile(path.join(dir, 'cordis.yml'), `- id: session\n  name: '@goalkeeper/session'\n  config:\n    dir: ${sessionsDir}\n    keyFile: ${path.join(dir, 'session.key')}\n`)
        const time = (args: string[]) => {
          const start = process.hrtime.bigint()
          const result = spawnSync(process.execPath, args, { cwd: dir, stdio: 'ignore' })
          if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}`)
          return ms(start)
        }
        const first = time([cli, 'sessions'])
        const later = median([time([cli, 'sessions']), time([cli, 'sessions']), time([cli, 'sessions'])])
        const node = median([time(['-e', '0']), time(['-e', '0']), time(['-e', '0'])])
        console.log(`${''.padEnd(16)} goalkeeper sessions (20 rows): first ${first.toFixed(0).padStart(6)} ms   later ${later.toFixed(0).padStart(6)} ms   node -e 0 ${node.toFixed(0).padStart(4)} ms   ratio ${(later / node).toFixed(1)}x`)
      }
    } finally {
      await fs.rm(dir, { recursive: true, force: true })
    }
  }
}

async function agentRows() {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-scale-agents-'))
  try {
    const result = child(['agents', dir, String(AGENTS)], AGENT_FD_LIMIT)
    const verdict = result.ok === AGENTS && !result.error ? 'OK' : 'FAILED'
    console.log(`${AGENTS.toLocaleString('en')} idle agents under ulimit -n ${AGENT_FD_LIMIT}: ${result.ok ?? 0} open${result.error ? `, then: ${result.error}` : `, created in ${(result.createMs / 1000).toFixed(1)} s, one more append + flush each in ${(result.appendAllMs / 1000).toFixed(1)} s`}   ${verdict}`)
  } finally {
    await fs.rm(dir, { recursive: true, force: true })
  }
}

export async function run(only?: string) {
  if (!only || only === 'open') await openRows()
  if (!only || only === 'list') await listRows()
  if (!only || only === 'agents') await agentRows()
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [command, ...args] = process.argv.slice(2).filter((arg) => arg !== '--quick' && !arg.startsWith('--sizes='))
  if (command === 'open' && args.length === 3) await childOpen(args[0], args[1], args[2])
  else if (command === 'agents' && args.length === 2) await childAgents(args[0], Number(args[1]))
  else await run(command)
}
