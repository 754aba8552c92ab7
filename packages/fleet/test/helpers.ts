// A fleet fixture per test file: its own database (the test-kit harness), bare git repositories reached by
// file:// URLs, a cordis.yml with the fleet entry, sessions in that database, and the scripted model of
// goal-script.mjs. Workers and the other commands run as CLI child processes.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Context } from 'cordis'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import { Config, GoalQueue } from '@goalkeeper/fleet'
import { type EmbeddedServer, jsonLines, repoRoot, run, sessionStack, start, startEmbeddedPostgres, testDatabase, type Run, withDatabase } from '@goalkeeper/test-kit'

export { run, start, type Run }
export const SCRIPT = fileURLToPath(new URL('./goal-script.mjs', import.meta.url))
/** Short timings: a killed worker's job expires in seconds. */
export const FLEET = { expireSeconds: 3, heartbeatSeconds: 0.5, maintenanceSeconds: 1, pollMs: 100, retryDelaySeconds: 1 }
export const LEASE_MS = 2000

export interface Fleet {
  dir: string
  yml: string
  url: string
  key: string
  env: Record<string, string>
  /** Global options for every command. */
  globals: string[]
  /** The fleet entry's config (FLEET and the test's own); submits in the test process use it too. */
  config: Record<string, unknown>
  /** A new bare repository with one commit on main (README.md and `files`); returns its file:// URL. */
  repo(name: string, files?: Record<string, string>): Promise<string>
  /** The text of `file` on `branch` of the repository at `url`, or undefined. */
  show(url: string, branch: string, file: string): string | undefined
  /** Branches of a repository. */
  branches(url: string): string[]
  /** With `ownServer`: restarts the fleet's PostgreSQL server (see EmbeddedServer.restart). */
  restart(downMs?: number): Promise<void>
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t', GIT_CONFIG_GLOBAL: '/dev/null' } })

/**
 * `ownServer`: the fleet's database lives on an embedded PostgreSQL server of its own (started in
 * beforeAll, stopped in afterAll), which `fleet.restart()` restarts; never the run's shared server.
 */
export function useFleet(options: { fleet?: Record<string, unknown>; git?: Record<string, unknown>; script?: string; ownServer?: boolean; entries?: [string, string, Record<string, unknown>?][] } = {}): Fleet {
  const database = options.ownServer ? undefined : testDatabase()
  let server: EmbeddedServer | undefined
  const fleet = { dir: '', yml: '', url: '', key: randomBytes(32).toString('hex') } as Fleet
  fleet.restart = async (downMs) => {
    if (!server) throw new Error('restart() needs useFleet({ ownServer: true })')
    await server.restart(downMs)
  }
  beforeAll(async () => {
    fleet.dir = await mkdtemp(path.join(os.tmpdir(), 'gk-fleet-'))
    await symlink(path.join(repoRoot, 'node_modules'), path.join(fleet.dir, 'node_modules'), 'dir')
    await mkdir(path.join(fleet.dir, 'repos'))
    if (options.ownServer) {
      server = await startEmbeddedPostgres({ fsync: false })
      const admin = new pg.Client({ connectionString: server.url })
      await admin.connect()
      await admin.query('CREATE DATABASE fleet').finally(() => admin.end())
      fleet.url = withDatabase(server.url, 'fleet')
    } else fleet.url = database!.url
    fleet.yml = path.join(fleet.dir, 'cordis.yml')
    const fleetConfig = { ...FLEET, ...options.fleet, git: { root: path.join(fleet.dir, 'workspaces'), ...options.git } }
    fleet.config = fleetConfig
    await writeFile(fleet.yml, [
      ['fleet', '@goalkeeper/fleet', fleetConfig],
      ['session', '@goalkeeper/session', { database: '${GOALKEEPER_DATABASE_URL}', key: '${GOALKEEPER_SESSION_KEY}', leaseMs: LEASE_MS }],
      ['model', '@goalkeeper/model', { scripted: { module: options.script ?? SCRIPT } }],
      ['tools', '@goalkeeper/tools'],
      ['workspace-tools', '@goalkeeper/workspace-tools'],
      ['agent-loop', '@goalkeeper/agent-loop'],
      ['goal', '@goalkeeper/goal'],
      ['tool-goal', '@goalkeeper/tool-goal'],
      ['goal-budget', '@goalkeeper/goal-budget'],
      ['goal-session', '@goalkeeper/goal-session'],
      ...(options.entries ?? []),
    ].map(([id, name, config]) => `- id: ${id}\n  name: '${name}'${config ? `\n  config: ${JSON.stringify(config)}` : ''}`).join('\n') + '\n')
    fleet.env = { GOALKEEPER_DATABASE_URL: fleet.url, GOALKEEPER_SESSION_KEY: fleet.key }
    fleet.globals = ['--cwd', fleet.dir, '--config', fleet.yml]
  })
  // A worker a failed test left running would take the next test's jobs.
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((child) => {
      if (child.child.exitCode !== null || child.child.signalCode !== null) return undefined
      child.child.kill('SIGKILL')
      return child.exit
    }))
  })
  afterAll(async () => {
    await server?.stop()
    if (fleet.dir && !process.env.FLEET_KEEP) await rm(fleet.dir, { recursive: true, force: true })
  })
  fleet.repo = async (name, files = {}) => {
    const bare = path.join(fleet.dir, 'repos', `${name}.git`)
    const seed = path.join(fleet.dir, 'repos', `${name}-seed`)
    git(fleet.dir, 'init', '--quiet', '--bare', '-b', 'main', bare)
    git(fleet.dir, 'clone', '--quiet', bare, seed)
    await writeFile(path.join(seed, 'README.md'), `# ${name}\n`)
    for (const [file, text] of Object.entries(files)) await writeFile(path.join(seed, file), text)
    git(seed, 'add', '.')
    git(seed, 'commit', '--quiet', '-m', 'init')
    git(seed, 'push', '--quiet', 'origin', 'HEAD:main')
    return `file://${bare}`
  }
  fleet.show = (url, branch, file) => {
    try {
      return git(fleet.dir, '--git-dir', fileURLToPath(url), 'show', `${branch}:${file}`)
    } catch {
      return undefined
    }
  }
  fleet.branches = (url) => git(fleet.dir, '--git-dir', fileURLToPath(url), 'branch', '--format=%(refname:short)').split('\n').filter(Boolean)
  return fleet
}

/** A CLI command against the fleet's composition and database. */
export function command(fleet: Fleet, args: string[], env: Record<string, string> = {}) {
  return run([...fleet.globals, ...args], { env: { ...fleet.env, ...env } })
}

const workers: Run[] = []

export function worker(fleet: Fleet, args: string[], env: Record<string, string> = {}): Run {
  const child = start([...fleet.globals, 'worker', ...args], { env: { ...fleet.env, ...env } })
  workers.push(child)
  return child
}

/** Workers started at once, one per name, each with `args`; `logs()` is what they said on stderr, together. */
export function startWorkers(fleet: Fleet, names: string[], args: string[] = []): { workers: Run[]; logs(): string } {
  const runs = names.map((name) => worker(fleet, ['--name', name, ...args]))
  return { workers: runs, logs: () => runs.map((run) => run.stderr()).join('') }
}

/** How many rounds the scripted models were asked for, by their `script: round N of goal-M` lines. */
export const roundsIn = (text: string) => [...text.matchAll(/script: round \d+ of goal-\d+/g)].length

/** Submits a goal; returns its job id (stdout). */
export async function submit(fleet: Fleet, objective: string, repo: string, ...more: string[]): Promise<string> {
  const result = await command(fleet, ['submit', objective, '--repo', repo, ...more])
  if (result.code !== 0) throw new Error(`submit failed (${result.code}):\n${result.stderr}`)
  return result.stdout.trim()
}

/** The queue as `queue --json` lists it. */
export async function listQueue(fleet: Fleet): Promise<any[]> {
  const result = await command(fleet, ['--json', 'queue'])
  if (result.code !== 0) throw new Error(`queue failed (${result.code}):\n${result.stderr}`)
  return jsonLines(result.stdout)
}

/** Reads sessions through the real session plugin on the fleet's database (read-only opens). */
export async function readSessions(fleet: Fleet, ids: string[]) {
  const root = new Context()
  const fiber = await root.plugin(sessionStack, { database: fleet.url, key: fleet.key })
  try {
    const out = new Map<string, { records: { seq: number; type: string; data: any }[]; integrity: any }>()
    for (const id of ids) {
      const session = await root.get('sessions')!.open(id, { readOnly: true })
      out.set(id, { records: session.records.map(({ seq, type, data }) => ({ seq, type, data })), integrity: session.integrity })
    }
    return out
  } finally {
    await fiber.dispose()
  }
}

/** Resolves once `predicate` holds for the stderr of the runs (checked on every chunk, no polling); rejects when one exits with an error. */
export function untilLogged(runs: Run[], predicate: () => boolean, what: string, guardMs = 180_000): Promise<void> {
  return new Promise((resolve, reject) => {
    // A guard against a hang, not a measure: it names what was awaited and shows what the workers said.
    const guard = setTimeout(() => reject(new Error(`no ${what} after ${guardMs} ms; the workers said:\n${runs.map((run) => run.stderr()).join('\n---\n')}`)), guardMs)
    const check = () => {
      if (!predicate()) return
      clearTimeout(guard)
      for (const run of runs) run.child.stderr!.off('data', check)
      resolve()
    }
    for (const run of runs) {
      run.child.stderr!.on('data', check)
      void run.exit.then((code) => code !== 0 && reject(new Error(`a worker exited with ${code} while waiting for ${what}:\n${run.stderr()}`)))
    }
    check()
  })
}

/** Ends every other connection to the fleet's database (what a failover or an operator does); returns how many. */
export async function terminateBackends(fleet: Fleet): Promise<number> {
  const client = new pg.Client({ connectionString: fleet.url })
  await client.connect()
  try {
    const { rows } = await client.query(
      'SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    )
    return rows[0].n
  } finally {
    await client.end()
  }
}

export interface SubmittedGoal {
  id: string
  sessionId: string
  repo: string
  /** `goal-N`: what the scripted model writes and the objective names. */
  name: string
}

/** Goals submitted through the queue in this process, one after another (a CLI submit each would take seconds). */
export async function queueGoals(fleet: Fleet, specs: { objective: string; repo: string; maxRounds?: number }[]): Promise<{ id: string; sessionId: string }[]> {
  // The jobs carry the submitter's timings (expiry, retries): the fleet entry's, as a CLI submit would.
  const queue = new GoalQueue(Config(fleet.config), fleet.url)
  const queued: { id: string; sessionId: string }[] = []
  try {
    for (const spec of specs) {
      const { id, job } = await queue.submit({ ref: 'main', ...spec })
      queued.push({ id, sessionId: job.sessionId })
    }
  } finally {
    await queue.stop()
  }
  return queued
}

/** `count` goals, each on a new repository `<prefix>-N`. */
export async function submitGoals(fleet: Fleet, prefix: string, count: number): Promise<SubmittedGoal[]> {
  const repos = await Promise.all(Array.from({ length: count }, (_, index) => fleet.repo(`${prefix}-${index + 1}`)))
  const queued = await queueGoals(fleet, repos.map((repo, index) => ({ objective: `Write result.txt for goal-${index + 1}`, repo, maxRounds: 6 })))
  return queued.map((goal, index) => ({ ...goal, repo: repos[index]!, name: `goal-${index + 1}` }))
}

/** Jobs the workers logged as done and complete. */
export const doneIn = (text: string) => new Set([...text.matchAll(/goal (\S+) done: complete/g)].map((match) => match[1]))

/**
 * What every run of goal-script.mjs must end with, whatever happened on the way: each job done and
 * complete in the queue, its branch holding its result, and its session signed throughout, with
 * contiguous seqs and exactly one create and one complete of the goal.
 */
export async function expectEveryGoalDoneOnce(fleet: Fleet, goals: SubmittedGoal[]): Promise<void> {
  const listed = new Map((await listQueue(fleet)).map((goal) => [goal.id, goal]))
  const sessions = await readSessions(fleet, goals.map((goal) => goal.sessionId))
  for (const goal of goals) {
    expect(listed.get(goal.id)).toMatchObject({ state: 'done', phase: 'complete', sessionId: goal.sessionId })
    // On a miss, the session's fleet records and turns say which run did what.
    const story = sessions.get(goal.sessionId)!.records
      .filter((record) => record.type.startsWith('fleet/') || record.type === 'turn/start' || record.type === 'goal/change')
      .map((record) => `${record.seq} ${record.type} ${JSON.stringify(record.data).slice(0, 160)}`).join('\n')
    expect(fleet.show(goal.repo, `goalkeeper/${goal.sessionId}`, 'result.txt'), `${goal.name}, session ${goal.sessionId}:\n${story}`).toBe(`${goal.name} done\n`)
  }
  for (const goal of goals) {
    const { records, integrity } = sessions.get(goal.sessionId)!
    expect(integrity.state).toBe('signed')
    expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index))
    expect(records.filter((record) => record.type === 'goal/change' && record.data.op === 'create')).toHaveLength(1)
    expect(records.filter((record) => record.type === 'goal/change' && record.data.op === 'complete')).toHaveLength(1)
  }
}
