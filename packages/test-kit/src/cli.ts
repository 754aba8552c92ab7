// Child-process helpers for the tests that run the goalkeeper CLI (host and fleet): a temp project with its own
// cordis.yml (the real plugins, only the model scripted by a module written per test) and a runner
// that waits on output lines and the exit, never on timers.
import { type ChildProcess, spawn } from 'node:child_process'
import { watch } from 'node:fs'
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach } from 'vitest'
import { nodeArgs } from './child-builds.ts'
import { jsonOutputProblem } from './json-output.ts'

/**
 * How long a test of CLI child processes may take: a guard against hangs, not a speed check. Each child
 * starts a composition; on a 2-core machine at a load of 25 a test that runs eight of them took over a
 * minute, with every wait in it on an event or an exit. Every test of a CLI child runs under this limit.
 */
export const CLI_TIMEOUT = 240_000

/**
 * How long one wait on a child (`waitFor`, `run`) may take before it fails naming what it waited for: the
 * command, the awaited output or exit, and the output so far. Shorter than CLI_TIMEOUT, so a hang is
 * reported by the wait that hangs rather than by the test's bare timeout.
 */
export const CHILD_WAIT_LIMIT = 150_000

export const repoRoot = path.resolve(fileURLToPath(import.meta.url), '../../../..')
const cli = path.join(repoRoot, 'packages/host/src/cli.ts')

export interface Project {
  dir: string
  /** The agent's workspace (`--cwd`). */
  workspace: string
  sessions: string
  yml: string
  script: string
  /** Global options that point the CLI at this project. */
  globals: string[]
}

export interface ProjectOptions {
  /** Body of the scripted model module; it sees the helpers of SCRIPT_PRELUDE. */
  script: string
  /** Extra config per entry id (merged into the defaults), e.g. `{ 'tool-goal': { blockedThreshold: 0 } }`. */
  config?: Record<string, Record<string, unknown>>
  /** Extra yml text appended after the entries. */
  extraYml?: string
  /** Replaces the generated cordis.yml. */
  yml?: string
}

/** The helpers every test script can use (model-script.mjs), `dir` (the project directory) and `released`. */
const SCRIPT_PRELUDE = `
import { existsSync, watch, writeFileSync, appendFileSync } from 'node:fs'
import path from 'node:path'
import { completeGoal, many, opening, releasedIn, roundOf, say, textOf, turnResults } from '${new URL('./model-script.mjs', import.meta.url).href}'
const dir = path.dirname(new URL(import.meta.url).pathname)
const released = releasedIn(dir)
`

const ENTRIES: [id: string, name: string][] = [
  ['session', '@goalkeeper/session'],
  ['model', '@goalkeeper/model'],
  ['tools', '@goalkeeper/tools'],
  ['workspace-tools', '@goalkeeper/workspace-tools'],
  ['agent-loop', '@goalkeeper/agent-loop'],
  ['project-instructions', '@goalkeeper/project-instructions'],
  ['goal', '@goalkeeper/goal'],
  ['tool-goal', '@goalkeeper/tool-goal'],
  ['goal-budget', '@goalkeeper/goal-budget'],
  ['goal-auto-resume', '@goalkeeper/goal-auto-resume'],
  ['loop-guard', '@goalkeeper/loop-guard'],
  ['mistake-limit', '@goalkeeper/mistake-limit'],
  ['goal-session', '@goalkeeper/goal-session'],
]

export function compositionYml(project: Pick<Project, 'sessions' | 'script'>, options: Pick<ProjectOptions, 'config' | 'extraYml'> = {}): string {
  const defaults: Record<string, Record<string, unknown>> = {
    session: { dir: project.sessions },
    model: { scripted: { module: project.script } },
  }
  const lines = ENTRIES.map(([id, name]) => {
    const config = { ...defaults[id], ...options.config?.[id] }
    return `- id: ${id}\n  name: '${name}'${Object.keys(config).length ? `\n  config: ${JSON.stringify(config)}` : ''}`
  })
  return `${lines.join('\n')}\n${options.extraYml ?? ''}`
}

/**
 * Options of a project whose agents talk to a `local` entry of the HTTP provider (custom preset, model `m1`,
 * no retries unless `entry` says so) at `url`, a local OpenAI-compatible server; the scripted model is unused.
 */
export function localModelProject(url: string, options: { config?: ProjectOptions['config']; entry?: Record<string, unknown> } = {}): ProjectOptions {
  const entry = { preset: 'custom', name: 'local', baseUrl: url, model: 'm1', maxRetries: 0, ...options.entry }
  return {
    script: 'export default many(() => ({ text: "offline answer" }))',
    config: { 'agent-loop': { model: ['local', 'scripted'] }, ...options.config },
    extraYml: `- id: local\n  name: '@goalkeeper/model-openai'\n  config: ${JSON.stringify(entry)}\n`,
  }
}

/** A fresh project per test, removed afterwards; children still running are killed. */
export function useProject() {
  const state = { dir: '' }
  beforeEach(async () => {
    state.dir = await mkdtemp(path.join(os.tmpdir(), 'gk-'))
    // Plugins are resolved by package name from the cordis.yml's directory.
    await symlink(path.join(repoRoot, 'node_modules'), path.join(state.dir, 'node_modules'), 'dir')
  })
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await rm(state.dir, { recursive: true, force: true })
  })
  return async (options: ProjectOptions): Promise<Project> => {
    const { dir } = state
    const project = {
      dir,
      workspace: path.join(dir, 'workspace'),
      sessions: path.join(dir, 'sessions'),
      yml: path.join(dir, 'cordis.yml'),
      script: path.join(dir, 'script.mjs'),
    }
    await mkdir(project.workspace, { recursive: true })
    await writeFile(project.script, `${SCRIPT_PRELUDE}\n${options.script}\n`)
    await writeFile(project.yml, options.yml ?? compositionYml(project, options))
    return { ...project, globals: ['--cwd', project.workspace, '--config', project.yml] }
  }
}

const children: ChildProcess[] = []

export interface Run {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  exit: Promise<number | null>
  /**
   * Resolves when stdout or stderr (as named) has matched `pattern`; rejects if the child exits first, or
   * after CHILD_WAIT_LIMIT naming the pattern.
   */
  waitFor: (stream: 'stdout' | 'stderr', pattern: RegExp) => Promise<void>
  /** Writes one line to the child's stdin (`stdin: 'pipe'` runs only). */
  type: (line: string) => void
  /** `exit`, failing with the command and its output when the child has not exited within CHILD_WAIT_LIMIT. */
  exited: () => Promise<number | null>
}

/** A user config directory that does not exist. */
const NO_USER_CONFIG = path.join(os.tmpdir(), `gk-no-user-config-${process.pid}`)

/** The environment of a CLI child: the runner's, without what would change how the CLI behaves, plus `extra`. */
export function childEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1' }
  // A key in the test runner's environment must not switch these runs to a real model, and npm's variables
  // (the runner may be `npm test`) would change the hints to `npx goalkeeper`.
  for (const name of Object.keys(env)) if (/_API_KEY$/.test(name) || name.startsWith('npm_')) delete env[name]
  // Nor may the user-level cordis.yml and AGENTS.md of whoever runs the tests; the session signing key of
  // test runs lives there too, never in the user's own config.
  env.XDG_CONFIG_HOME = NO_USER_CONFIG
  return { ...env, ...extra }
}

export function start(args: string[], options: { stdin?: 'pipe' | 'ignore'; env?: Record<string, string | undefined> } = {}): Run {
  const env = childEnv(options.env)
  // The run's bundle of the CLI (test-kit's child builds); from source, `--import tsx` resolves tsx from
  // the cwd, so children run in the repository.
  const child = spawn(process.execPath, [...nodeArgs(cli), ...args], {
    cwd: repoRoot,
    env,
    stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  const text = { stdout: '', stderr: '' }
  const waiters: { stream: 'stdout' | 'stderr'; pattern: RegExp; resolve: () => void; reject: (error: Error) => void }[] = []
  const wake = () => {
    for (const waiter of waiters.filter((item) => item.pattern.test(text[item.stream]))) {
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve()
    }
  }
  child.stdout!.on('data', (chunk) => {
    text.stdout += chunk
    wake()
  })
  child.stderr!.on('data', (chunk) => {
    text.stderr += chunk
    wake()
  })
  const exit = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      for (const waiter of waiters.splice(0)) {
        waiter.reject(new Error(`exited with ${code} before ${waiter.stream} matched ${waiter.pattern}:\n--- stdout\n${text.stdout}\n--- stderr\n${text.stderr}`))
      }
      resolve(code)
    }),
  )
  const limited = <T>(promise: Promise<T>, what: string) =>
    withLimit(promise, () => `goalkeeper ${args.join(' ')} (pid ${child.pid}): ${what} within ${CHILD_WAIT_LIMIT / 1000} s:\n--- stdout\n${text.stdout}\n--- stderr\n${text.stderr}`)
  return {
    child,
    stdout: () => text.stdout,
    stderr: () => text.stderr,
    exit,
    waitFor: (stream, pattern) =>
      pattern.test(text[stream])
        ? Promise.resolve()
        : limited(new Promise<void>((resolve, reject) => waiters.push({ stream, pattern, resolve, reject })), `${stream} did not match ${pattern}`),
    type: (line) => void child.stdin!.write(`${line}\n`),
    exited: () => limited(exit, 'no exit'),
  }
}

/** `promise`, or a rejection with `message()` once CHILD_WAIT_LIMIT has passed. */
function withLimit<T>(promise: Promise<T>, message: () => string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message())), CHILD_WAIT_LIMIT)
  })
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer))
}

export async function run(args: string[], options?: Parameters<typeof start>[1]) {
  const handle = start(args, options)
  const code = await handle.exited()
  return { code, stdout: handle.stdout(), stderr: handle.stderr() }
}

/** How the CLI's hints start for a project: its directories lie outside the repository, so both paths are absolute. */
export function hint(project: Project): string {
  return `goalkeeper --cwd ${project.workspace} --config ${project.yml}`
}

/** The session id the CLI announced on stderr. */
export function sessionIdOf(stderr: string): string {
  const match = /goalkeeper: session (\S+) \((?:new|resumed)\)/.exec(stderr)
  if (!match) throw new Error(`no session id on stderr:\n${stderr}`)
  return match[1]
}

/** Records of a session file, parsed line by line, without a line's mac and batch size. */
export async function readSession(project: Project, id: string): Promise<{ seq: number; type: string; data: any }[]> {
  const text = await readFile(path.join(project.sessions, `${id}.jsonl`), 'utf8')
  return text.split('\n').filter(Boolean).map((line) => {
    const { mac, batch, ...record } = JSON.parse(line)
    return record
  })
}

/** Resolves once the file's content matches `pattern` (fs.watch on its directory, no polling); fails after CHILD_WAIT_LIMIT naming both. */
export function fileMatches(file: string, pattern: RegExp): Promise<void> {
  let last = ''
  let watcher: ReturnType<typeof watch> | undefined
  const matched = new Promise<void>((resolve) => {
    let done = false
    const check = async () => {
      const text = await readFile(file, 'utf8').catch(() => '')
      last = text
      if (done || !pattern.test(text)) return
      done = true
      resolve()
    }
    watcher = watch(path.dirname(file), () => void check())
    void check()
  })
  return withLimit(matched, () => `${file} did not match ${pattern} within ${CHILD_WAIT_LIMIT / 1000} s; it holds:\n${last}`).finally(() => watcher?.close())
}

/** Content hash and mtime of every file in the sessions directory, to prove a command wrote nothing. */
export async function snapshot(project: Project): Promise<Record<string, string>> {
  const result: Record<string, string> = {}
  for (const name of (await readdir(project.sessions)).sort()) {
    // The listing's summary index (and its journal) is a cache that commands rewrite; the logs are what count.
    if (name.startsWith('.summaries')) continue
    const file = path.join(project.sessions, name)
    const hash = createHash('sha256').update(await readFile(file)).digest('hex')
    result[name] = `${hash} ${(await stat(file)).mtimeMs}`
  }
  return result
}

/**
 * Stdout lines of a --json command parsed as JSON; throws (failing the test) on any line that is not JSON, or
 * not a line of a type and shape that schema/json-output.schema.json of the host package documents.
 */
export function jsonLines(stdout: string): any[] {
  return stdout.split('\n').filter(Boolean).map((line, index) => {
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      throw new Error(`stdout line ${index + 1} is not JSON: ${line}`)
    }
    const problem = jsonOutputProblem(value)
    if (problem) throw new Error(`stdout line ${index + 1} is not --json output as the schema documents it: ${problem}\n${line}`)
    return value
  })
}
