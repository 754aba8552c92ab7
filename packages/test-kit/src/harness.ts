// Shared test harness (spec: HARNESS.md). Composes the real core plugins on a fresh Context;
// only the model is scripted.
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Context, Logger, type Events, type Fiber } from 'cordis'
import type { Session, SessionRecord } from '@goalkeeper/session'
import type { ScriptedProvider } from '@goalkeeper/model'
import type { Agent, CreateAgentOptions } from '@goalkeeper/agent-loop'
import { sessionStack } from './sessions.ts'

export interface HarnessOptions {
  /** Load the workspace tools, rooted at `workspace` (default true). */
  workspaceTools?: boolean
  /** agent-loop config. */
  agentLoop?: Record<string, unknown>
  /** session config (`dir` defaults to `<tmp>/sessions`). */
  sessions?: Record<string, unknown>
  /** After how long an unload in `dispose` is reported on stderr as slow (default SLOW_DISPOSE_MS). */
  slowDisposeMs?: number
}

export interface LogLine { level: string; name: string; text: string }
export interface CapturedEvent { name: string; args: unknown[] }

export interface Harness {
  /** The root Context: services are reachable here (`root.agents`), and listeners added here outlive `dispose`. */
  root: Context
  /** Temp dir (removed by dispose). */
  dir: string
  sessionsDir: string
  /** Workspace root for the workspace tools and the default cwd of agents. */
  workspace: string
  logs: LogLine[]
  scripted: ScriptedProvider
  /** `ctx.plugin` + await, inside the app fiber; disposed (in reverse load order) by `dispose`. */
  load(plugin: any, config?: any): Promise<Fiber>
  /** The fiber of a core plugin the harness loaded ('session', 'model', 'tools', 'workspace-tools', 'agent-loop'), e.g. to unload it mid-run. */
  fiber(name: string): Fiber
  /** `ctx.agents.create` with the model defaulting to `scripted` and the cwd to `workspace`. */
  createAgent(options?: Partial<CreateAgentOptions>): Promise<Agent>
  /** The records of a session: in memory, and those it let go of at a checkpoint read from its file. */
  records(target: Agent | Session | string): SessionRecord[]
  /** Records parsed from the session's JSONL file (call after a flush). */
  readFile(target: Agent | Session | string): SessionRecord[]
  /** Starts a live capture of the named events (call before acting); the returned array fills as they fire. */
  events(names: readonly (keyof Events & string)[]): CapturedEvent[]
  /** Captured error-level log lines. */
  errors(): string[]
  /** Disposes the loaded plugins in reverse order, then the app fiber, then removes the temp dir. */
  dispose(): Promise<void>
}

const WATERFALLS = new Set(['agent/prompt-submit'])

/** Records as the service holds them: without the mac (and, in a log of version 2, the batch size) a line carries. */
function readRecords(file: string): SessionRecord[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => {
    const { mac, batch, ...record } = JSON.parse(line)
    return record
  })
}

export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'gk-'))
  // A test may share a sessions dir between harnesses (restart in a new Context); it then owns that dir.
  const sessionsDir = typeof options.sessions?.dir === 'string' ? path.resolve(options.sessions.dir) : path.join(dir, 'sessions')
  const workspace = path.join(dir, 'workspace')
  await fsp.mkdir(sessionsDir, { recursive: true })
  await fsp.mkdir(workspace, { recursive: true })

  const root = new Context()
  const logs: LogLine[] = []
  const exporter = {
    levels: { default: 3 },
    formatters: { c: (value: unknown) => String(value) },
    export: (message: any) => logs.push({ level: message.type, name: message.name, text: Logger.format(exporter as any, message) }),
  }
  root.logger.exporter(exporter)

  // Plugins live in a child fiber, so disposing it keeps the root (and its log exporter) alive.
  let app!: Context
  const appFiber = root.plugin({ name: 'harness', apply: (ctx: Context) => { app = ctx } })
  await appFiber
  const fibers: Fiber[] = []
  const load = async (plugin: any, config?: any) => {
    const fiber = app.plugin(plugin, config)
    fibers.push(fiber)
    await fiber
    return fiber
  }

  let disposed = false
  const dispose = async () => {
    if (disposed) return
    disposed = true
    try {
      const slowMs = options.slowDisposeMs ?? SLOW_DISPOSE_MS
      for (const fiber of fibers.reverse()) await disposeWatched(fiber, root, slowMs)
      await disposeWatched(appFiber, root, slowMs)
    } finally {
      await fsp.rm(dir, { recursive: true, force: true })
    }
  }

  const core = new Map<string, Fiber>()
  const loadCore = async (name: string, module: any, config: unknown) => { core.set(name, await load(module, config)) }
  try {
    // The signing key of tests is a shared temp file, never the user's own.
    await loadCore('session', sessionStack, { keyFile: path.join(os.tmpdir(), 'goalkeeper-tests', 'session.key'), ...options.sessions, dir: sessionsDir })
    await loadCore('model', await import('@goalkeeper/model'), {})
    await loadCore('tools', await import('@goalkeeper/tools'), {})
    if (options.workspaceTools !== false) await loadCore('workspace-tools', await import('@goalkeeper/workspace-tools'), { root: workspace })
    await loadCore('agent-loop', await import('@goalkeeper/agent-loop'), options.agentLoop ?? {})
    for (const service of ['sessions', 'models', 'tools', 'agents'] as const) {
      if (!root.get(service)) throw new Error(`harness: service ctx.${service} did not start; see the logs:\n${errorLines(logs).join('\n')}`)
    }
  } catch (error) {
    await dispose()
    throw error
  }

  const sessionOf = (target: Agent | Session | string): Session => {
    if (typeof target !== 'string') return 'session' in target ? target.session : target
    const session = root.sessions.get(target)
    if (!session) throw new Error(`harness: session ${target} is not open`)
    return session
  }

  const fileOf = (target: Agent | Session | string): string => {
    if (typeof target !== 'string') return sessionOf(target).file
    const open = root.sessions.get(target)
    if (open) return open.file
    for (const name of fs.readdirSync(sessionsDir)) {
      if (!name.endsWith('.jsonl')) continue
      const file = path.join(sessionsDir, name)
      const first = fs.readFileSync(file, 'utf8').split('\n', 1)[0]
      try {
        if (JSON.parse(first)?.data?.id === target) return file
      } catch {}
    }
    throw new Error(`harness: no session file for ${target} in ${sessionsDir}`)
  }

  return {
    root,
    dir,
    sessionsDir,
    workspace,
    logs,
    get scripted() {
      return root.models.get('scripted') as ScriptedProvider
    },
    load,
    fiber(name) {
      const fiber = core.get(name)
      if (!fiber) throw new Error(`harness: no core plugin ${name} (loaded: ${[...core.keys()].join(', ')})`)
      return fiber
    },
    createAgent: (agentOptions = {}) => root.agents.create({ model: 'scripted', cwd: workspace, ...agentOptions }),
    records: (target) => {
      const session = sessionOf(target)
      // A session past a checkpoint let go of what precedes it, which is durable by then: read from the file.
      const before = session.firstSeq > 0 ? readRecords(fileOf(target)).filter((record) => record.seq < session.firstSeq) : []
      return [...before, ...session.records]
    },
    readFile: (target) => readRecords(fileOf(target)),
    events(names) {
      const captured: CapturedEvent[] = []
      for (const name of names) {
        const listener = WATERFALLS.has(name)
          ? (...args: any[]) => { captured.push({ name, args: args.slice(0, -1) }); return args[args.length - 1]() }
          : (...args: unknown[]) => { captured.push({ name, args }) }
        root.on(name, listener)
      }
      return captured
    },
    errors: () => errorLines(logs),
    dispose,
  }
}

/**
 * How long one plugin's unload may take before the harness says what it is waiting on. An unload of the test
 * stack takes milliseconds; one that hangs otherwise ends as a bare hook timeout in the test's afterEach.
 */
export const SLOW_DISPOSE_MS = 5_000

// Taken when the module loads: a test's fake or spied timers must neither hold back nor count this one.
const realSetTimeout = globalThis.setTimeout
const realClearTimeout = globalThis.clearTimeout

/** `fiber.dispose()`, reporting on stderr when it takes over `slowMs`: the plugin, what it held, the agents. */
async function disposeWatched(fiber: Fiber, root: Context, slowMs: number): Promise<void> {
  // Its effects are cleared when the unload starts, so they are named as they were before it.
  const effects = fiber.getEffects().map(effectLabel)
  const started = performance.now()
  let slow = false
  const timer = realSetTimeout(() => {
    slow = true
    console.warn(`harness: unloading plugin ${fiber.name} has taken over ${slowMs / 1000} s (state ${fiber.state}); its effects when the unload began: ${effects.join(', ') || 'none'}; ${describeAgents(root)}`)
  }, slowMs)
  try {
    await fiber.dispose()
  } finally {
    realClearTimeout(timer)
    if (slow) console.warn(`harness: plugin ${fiber.name} unloaded after ${((performance.now() - started) / 1000).toFixed(1)} s; ${describeAgents(root)}`)
  }
}

function effectLabel(effect: { label: string; children: { label: string; children: unknown[] }[] }): string {
  return effect.children.length ? `${effect.label} [${effect.children.map((child) => effectLabel(child as typeof effect)).join(', ')}]` : effect.label
}

/** Each live agent's status and loop phase, turn and inbox, and its goal's phase when the goal service is loaded. */
export function describeAgents(root: Context): string {
  const agents = (root.get('agents') as { list(): Agent[] } | undefined)?.list() ?? []
  if (!agents.length) return 'no live agents'
  const goals = root.get('goals' as any) as { get(agent: Agent): { phase: string; activation?: string } | undefined } | undefined
  return `agents: ${agents.map((agent) => {
    const goal = goals?.get(agent)
    // The loop's phase (deciding, running, between, ...) is private to agent-loop; read here for diagnosis only.
    const phase = (agent as unknown as { phase?: { kind?: string } }).phase?.kind
    const parts = [`status ${agent.status}${phase ? ` (${phase})` : ''}`, `turn ${agent.turn ?? 'none'}`, `${agent.queued.length} queued`]
    if (agent.disposed) parts.push('disposed')
    if (goal) parts.push(`goal ${goal.phase}${goal.activation ? `/${goal.activation}` : ''}`)
    return `${agent.id} (${parts.join(', ')})`
  }).join('; ')}`
}

function errorLines(logs: LogLine[]) {
  return logs.filter((line) => line.level === 'error').map((line) => `${line.name}: ${line.text}`)
}

/** A harness with `files` (workspace-relative path -> content) written into its workspace. */
export async function harnessWith(files: Record<string, string> = {}, options: HarnessOptions = {}): Promise<Harness> {
  const harness = await createHarness(options)
  try {
    for (const [file, content] of Object.entries(files)) await fsp.writeFile(path.join(harness.workspace, file), content)
  } catch (error) {
    await harness.dispose()
    throw error
  }
  return harness
}
