// Start-up of the installed CLI (the build in dist/goalkeeper, as `npm install -g` gets it), next to
// `node -e 0` measured in the same run: `goalkeeper --help`, and `goalkeeper sessions` over a workspace
// with 100 saved sessions. Targets: --help <= 2.5x and sessions <= 3x of `node -e 0`.
// Run alone: node --import tsx bench/startup.bench.ts (it builds first).
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Context } from 'cordis'
import { sessionStack } from '@goalkeeper/test-kit'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const cli = path.join(root, 'dist/goalkeeper/goalkeeper.mjs')
const ROUNDS = 15
const SESSIONS = 100

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/** Milliseconds of one run of `node ...args`, to its exit. */
function time(args: string[], cwd: string): number {
  const start = process.hrtime.bigint()
  execFileSync(process.execPath, args, { cwd, stdio: 'ignore', env: { ...process.env, NO_COLOR: '1' } })
  return Number(process.hrtime.bigint() - start) / 1e6
}

/** A workspace with a cordis.yml naming only the session store, and `count` saved sessions with a few records each. */
async function workspaceWithSessions(count: number): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gk-startup-'))
  const sessions = path.join(dir, 'sessions')
  await writeFile(path.join(dir, 'cordis.yml'), `- id: session\n  name: '@goalkeeper/session'\n  config:\n    dir: ${sessions}\n`)
  const ctx = new Context()
  const fiber = await ctx.plugin(sessionStack, { dir: sessions })
  for (let i = 0; i < count; i++) {
    const session = await ctx.sessions.create({ cwd: dir })
    session.append('input/queued', { message: { id: `input-${i}`, source: { kind: 'human' }, content: [{ type: 'text', text: `task ${i}` }] } })
    await ctx.sessions.close(session)
  }
  await fiber.dispose()
  return dir
}

export async function run() {
  execFileSync(process.execPath, [path.join(root, 'scripts/build.mjs')], { cwd: root, stdio: 'inherit' })
  const dir = await workspaceWithSessions(SESSIONS)
  try {
    const rows: [string, string[]][] = [
      ['goalkeeper --help', [cli, '--help']],
      [`goalkeeper sessions (${SESSIONS} sessions)`, [cli, 'sessions', '--all']],
    ]
    const targets: Record<string, number> = { 'goalkeeper --help': 2.5, [`goalkeeper sessions (${SESSIONS} sessions)`]: 3 }
    // Warm-up: the disk cache and Node's compile cache, for every side.
    time(['-e', '0'], dir)
    for (const [, args] of rows) time(args, dir)
    const baseline: number[] = []
    const measured = rows.map(() => [] as number[])
    for (let round = 0; round < ROUNDS; round++) {
      baseline.push(time(['-e', '0'], dir))
      rows.forEach(([, args], index) => measured[index].push(time(args, dir)))
    }
    const base = median(baseline)
    console.log(`node -e 0                                  ${base.toFixed(0).padStart(5)} ms`)
    rows.forEach(([label], index) => {
      const value = median(measured[index])
      const ratio = value / base
      console.log(`${label.padEnd(42)} ${value.toFixed(0).padStart(5)} ms   ${ratio.toFixed(2)}x   target <= ${targets[label]}x ${ratio <= targets[label] ? 'OK' : 'MISSED'}`)
    })
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await run()
