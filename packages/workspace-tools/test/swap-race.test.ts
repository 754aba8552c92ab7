import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { setup, type Setup } from './helpers.ts'

/**
 * A second process swaps `ws/x` between a real directory and a symbolic link to a directory outside
 * the root, as fast as it can, while the tools work on paths below `x`. Plain JavaScript for
 * `node -e`: it has to start without a loader. Each move is a rename, so `x` is always one of the
 * two (or briefly absent); a directory write_file made at `x` while it was absent is moved aside
 * (into the root) so the swap goes on.
 */
const SWAPPER = `
const fs = require('node:fs')
const [x, aside, link, strays] = process.argv.slice(1)
let stray = 0
const place = (from, to) => {
  for (;;) {
    try {
      return fs.renameSync(from, to)
    } catch {
      try { fs.renameSync(to, strays + '/' + stray++) } catch {}
    }
  }
}
// Each state is held for about 0.1 ms, so that the swapper leaves the CPU to the tools on a small
// machine while it still swaps within the time any call takes.
const cell = new Int32Array(new SharedArrayBuffer(4))
const hold = () => Atomics.wait(cell, 0, 0, 0.1)
process.stdout.write('ready\\n')
for (;;) {
  place(x, aside)
  place(link, x)
  hold()
  place(x, link)
  place(aside, x)
  hold()
}
`

/** Marks everything outside: a result holding it was read outside the root. */
const OUTSIDE = 'OUTSIDE'

let t: Setup
let swapper: ChildProcess | undefined
beforeEach(async () => {
  t = await setup({ searchTimeoutMs: 30_000 })
})
afterEach(async () => {
  if (swapper?.exitCode === null && swapper.signalCode === null) {
    const gone = new Promise((done) => swapper!.once('exit', done))
    swapper.kill('SIGKILL')
    await gone
  }
  swapper = undefined
  await t.dispose()
})

/** Names and contents of every file and directory below `dir`, to notice any write. */
function snapshot(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1)).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    const name = prefix + entry.name
    if (entry.isDirectory()) return [`${name}/`, ...snapshot(full, `${name}/`)]
    return [`${name}: ${readFileSync(full, 'utf8')}`]
  })
}

async function startSwapper(): Promise<ChildProcess> {
  const x = path.join(t.workspace, 'x')
  const strays = path.join(t.workspace, 'strays')
  mkdirSync(strays)
  const child = spawn(process.execPath, ['-e', SWAPPER, x, path.join(t.workspace, 'x-aside'), path.join(t.workspace, 'x-link'), strays], { stdio: ['ignore', 'pipe', 'inherit'] })
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`the swapper exited (${code}) before it started`)))
    child.stdout!.once('data', () => resolve())
  })
  return child
}

describe('an intermediate directory swapped for a link to the outside by another process', () => {
  let before: string[]
  const escapes: string[] = []
  const outcomes: Record<string, number> = {}

  beforeEach(async () => {
    escapes.length = 0
    for (const key of Object.keys(outcomes)) delete outcomes[key]
    const ws = (name: string) => path.join(t.workspace, name)
    const out = (name: string) => path.join(t.outside, name)
    await fs.writeFile(out('f.txt'), `${OUTSIDE} ab\n`)
    await fs.mkdir(out('sub'))
    await fs.writeFile(out('sub/g.txt'), `${OUTSIDE} ab\n`)
    // Named so that a listing of the outside shows it.
    await fs.writeFile(out(`${OUTSIDE}.txt`), '')
    await fs.writeFile(out(`sub/${OUTSIDE}.txt`), '')
    await fs.mkdir(ws('x/sub'), { recursive: true })
    await fs.writeFile(ws('x/f.txt'), 'inside ab\n')
    await fs.writeFile(ws('x/sub/g.txt'), 'inside ab\n')
    await fs.symlink(t.outside, ws('x-link'))
    before = snapshot(t.outside)
    swapper = await startSwapper()
  })

  /** Counts the outcome of one call, and any sign that it read or wrote outside. */
  const record = (what: string, result: { ok: boolean; content: string; error?: { code: string } }) => {
    const outcome = result.ok ? 'ok' : result.content.includes('after it was checked') ? 'caught by the walk' : result.error!.code
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1
    if (result.content.includes(OUTSIDE)) escapes.push(`${what} read: ${result.content.slice(0, 200)}`)
    const now = snapshot(t.outside)
    if (now.join('\n') === before.join('\n')) return
    escapes.push(`${what} wrote outside: ${now.filter((line) => !before.includes(line)).join(', ')}`)
    // Put the outside back, so each escape is counted once.
    rmSync(t.outside, { recursive: true, force: true })
    mkdirSync(t.outside)
    for (const line of before) {
      if (line.endsWith('/')) mkdirSync(path.join(t.outside, line))
      else writeFileSync(path.join(t.outside, line.slice(0, line.indexOf(': '))), line.slice(line.indexOf(': ') + 2))
    }
  }
  const attempt = async (tool: string, args: Record<string, unknown>) => record(`${tool} ${JSON.stringify(args)}`, await t.run(tool, args))

  /** Runs `rounds` rounds of `round`, several in flight at once (as when agents share the tools), so the file system waits overlap. */
  const race = (rounds: number, round: (index: number) => Promise<void>) => Promise.all(Array.from({ length: 4 }, async (_, stream) => {
    for (let index = stream; index < rounds; index += 4) await round(index)
  }))

  const expectNoEscape = (attempts: number) => {
    expect(swapper!.exitCode).toBeNull()
    const byTool: Record<string, number> = {}
    for (const line of escapes) byTool[line.split(' ')[0]] = (byTool[line.split(' ')[0]] ?? 0) + 1
    expect({ escapes: escapes.length, byTool, first: escapes.slice(0, 3) }).toEqual({ escapes: 0, byTool: {}, first: [] })
    expect(snapshot(t.outside)).toEqual(before)
    // The race really ran: calls got through, and some were caught in the middle by the walk.
    expect(outcomes.ok).toBeGreaterThan(0)
    expect(outcomes['caught by the walk']).toBeGreaterThan(0)
    expect(Object.values(outcomes).reduce((a, b) => a + b)).toBe(attempts)
  }

  it('never lets a file tool read or write outside the root (5,000 attempts)', async () => {
    // search starts a worker thread (tens of milliseconds) whenever it reaches a file, so it gets a
    // smaller share of the attempts; it walks and opens like list_dir and read_file do.
    const ROUNDS = 1200
    const SEARCH_EVERY = 6
    await race(ROUNDS, async (round) => {
      // New parents now and then, so directory creation runs into the swap too.
      await attempt('write_file', { path: round % 4 === 0 ? `x/sub/n${round % 16}/f.txt` : 'x/f.txt', content: 'inside ab\n' })
      await attempt('edit_file', { path: round % 2 ? 'x/f.txt' : 'x/sub/g.txt', old_string: 'ab', new_string: 'ab!' })
      await attempt('read_file', { path: round % 2 ? 'x/sub/g.txt' : 'x/f.txt' })
      await attempt('list_dir', { path: round % 2 ? 'x/sub' : 'x', depth: 2 })
      if (round % SEARCH_EVERY === 0) await attempt('search', { pattern: 'ab', path: round % (2 * SEARCH_EVERY) ? 'x/sub' : 'x' })
    })
    expectNoEscape(ROUNDS * 4 + ROUNDS / SEARCH_EVERY)
  }, 120_000)

  it('never starts a command outside the root (run_command cwd, 300 attempts)', async () => {
    const ROUNDS = 300
    await race(ROUNDS, async (round) => {
      const cwd = round % 2 ? 'x/sub' : 'x'
      const result = await t.run('run_command', { command: 'pwd -P; ls', cwd })
      record(`run_command ${cwd}`, result)
      if (result.ok && !result.content.includes(OUTSIDE) && !result.content.startsWith(`${t.workspace}/`)) escapes.push(`run_command ${cwd} ran in: ${result.content.split('\n')[0]}`)
    })
    expectNoEscape(ROUNDS)
  }, 60_000)
})
