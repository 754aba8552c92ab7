// Sessions at scale: open time and peak memory at 1k/100k/1M records (each open in a fresh child
// process, next to a raw read + JSON.parse of the same file in its own child), listing time at 100 and
// 10,000 sessions (next to a bare readdir + stat of the same directory), and 10,000 idle agents (open
// writable sessions in one process) under `ulimit -n 1024`.
// Run alone: node --import tsx bench/session-scale.bench.ts [open|list|agents] [--quick]
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Context } from 'cordis'
import type { UserMessage } from '@goalkeeper/session'
import { sessionStack } from '@goalkeeper/test-kit'
import { median, payload } from './session-figures.ts'

const here = fileURLToPath(import.meta.url)
const cli = path.resolve(path.dirname(here), '../dist/goalkeeper/goalkeeper.mjs')
// --quick: small sizes, to check that the bench runs (its figures mean little).
const QUICK = process.argv.includes('--quick')
const OPEN_SIZES = QUICK ? [1_000] : [1_000, 100_000, 1_000_000]
const LIST_SIZES = QUICK ? [100] : [100, 10_000]
const AGENTS = QUICK ? 500 : 10_000
const AGENT_FD_LIMIT = 1024

const human = (i: number): { message: UserMessage } => ({ message: { id: `input-${i}`, source: { kind: 'human' }, content: [{ type: 'text', text: `task ${i}` }] } })
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6

async function withSessions<T>(dir: string, task: (ctx: Context) => Promise<T>): Promise<T> {
  const ctx = new Context()
  const fiber = await ctx.plugin(sessionStack, { dir: path.join(dir, 'sessions'), keyFile: path.join(dir, 'session.key'), maxOpenBytes: 2 ** 31, maxSessionBytes: 2 ** 31 })
  try {
    return await task(ctx)
  } finally {
    await fiber.dispose()
  }
}

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
  await withSessions(dir, async (ctx) => {
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
  await withSessions(dir, async (ctx) => {
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
      const id = await withSessions(dir, async (ctx) => {
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

async function listRows() {
  console.log('list sessions (in process; the first listing builds what the later ones reuse)')
  for (const count of LIST_SIZES) {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-scale-list-'))
    try {
      await withSessions(dir, async (ctx) => {
        for (let i = 0; i < count; i++) {
          const session = await ctx.sessions.create({ cwd: dir })
          session.append('input/queued', human(i))
          for (let r = 0; r < 20; r++) session.append('tool/result', payload(r))
          await ctx.sessions.close(session)
        }
      })
      const sessionsDir = path.join(dir, 'sessions')
      const raw = async () => {
        const start = process.hrtime.bigint()
        const names = await fs.readdir(sessionsDir)
        await Promise.all(names.map((name) => fs.stat(path.join(sessionsDir, name))))
        return ms(start)
      }
      const times = await withSessions(dir, async (ctx) => {
        const list = async () => {
          const start = process.hrtime.bigint()
          const listed = await ctx.sessions.list()
          if (listed.length !== count) throw new Error(`listed ${listed.length} of ${count}`)
          return ms(start)
        }
        const first = await list()
        const later = [await list(), await list(), await list()]
        return { first, later: median(later) }
      })
      const base = median([await raw(), await raw(), await raw()])
      console.log(`${`${count.toLocaleString('en')} sessions`.padEnd(16)} first list ${times.first.toFixed(0).padStart(6)} ms   later lists ${times.later.toFixed(0).padStart(6)} ms   readdir + stat ${base.toFixed(0).padStart(5)} ms   ratio ${(times.later / base).toFixed(1)}x`)
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
  const [command, ...args] = process.argv.slice(2).filter((arg) => arg !== '--quick')
  if (command === 'open' && args.length === 3) await childOpen(args[0], args[1], args[2])
  else if (command === 'agents' && args.length === 2) await childAgents(args[0], Number(args[1]))
  else await run(command)
}
