// A cordis.yml composition loaded by the real loader (@goalkeeper/loader) in a fresh temp project, for the
// cross-package tests that compose plugins the way a project does. Only the model is scripted.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { expect } from 'vitest'
import { Context, type Exporter, Logger } from 'cordis'
import { formatReport, Loader } from '@goalkeeper/loader'
import type { Agent } from '@goalkeeper/agent-loop'
import type { SessionRecord } from '@goalkeeper/session'

// Cordis's LoggerLevel is an ambient const enum (see notes/cordis4.md): the number, named.
const LOG_ERROR = 0

export interface ProjectPaths {
  /** The project directory (removed by dispose); cordis.yml lives here. */
  dir: string
  /** `<dir>/workspace`, the root of the workspace tools. */
  workspace: string
}

export interface Composition extends ProjectPaths {
  /** The cordis.yml the loader reads: rewrite it, then `loader.reload()`. */
  file: string
  root: Context
  loader: Loader
  /** Error-level log lines, `name: text`, in order. */
  errors: string[]
  /** Flushes the agent's session and returns the records parsed from its JSONL file (or its rows). */
  readLog(agent: Agent): Promise<SessionRecord[]>
  /** Disposes every entry through the loader, then removes the project (once; later calls do nothing). */
  dispose(): Promise<void>
}

/**
 * Writes `files` (paths relative to the project directory) and the yml that `yml(paths)` returns,
 * links node_modules so package names resolve from the yml's directory as they would in a project,
 * and loads it; a bad entry fails the test with the loader's report.
 */
export async function composeFromYml(yml: (paths: ProjectPaths) => string, files: Record<string, string> = {}): Promise<Composition> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-'))
  const workspace = path.join(dir, 'workspace')
  const file = path.join(dir, 'cordis.yml')
  await fs.mkdir(workspace)
  await fs.symlink(path.resolve('node_modules'), path.join(dir, 'node_modules'), 'dir')
  for (const [name, content] of Object.entries(files)) await fs.writeFile(path.join(dir, name), content)
  await fs.writeFile(file, yml({ dir, workspace }))

  const root = new Context()
  // Errors only: these tests assert that a run logs none, and show them when it does.
  const errors: string[] = []
  const exporter: Exporter = {
    levels: { default: LOG_ERROR },
    formatters: { c: (value) => String(value) },
    export: (message) => errors.push(`${message.name}: ${Logger.format(exporter, message)}`),
  }
  root.logger.exporter(exporter)
  const loader = new Loader(root, { file, env: {} })
  let disposed = false
  const dispose = async () => {
    if (disposed) return
    disposed = true
    try {
      await loader.dispose()
    } finally {
      await fs.rm(dir, { recursive: true, force: true })
    }
  }
  try {
    const report = await loader.load()
    expect(report.ok, formatReport(report).join('\n')).toBe(true)
  } catch (error) {
    await dispose()
    throw error
  }
  const readLog = async (agent: Agent) => {
    await root.sessions.flush(agent.session)
    // A log in a database (no file) is read through its store, in the same JSONL form.
    let text = ''
    if (agent.session.file.startsWith('postgres')) for await (const chunk of root.sessionStore.stream(agent.id)) text += chunk
    else text = await fs.readFile(agent.session.file, 'utf8')
    return text.trim().split('\n').map((line) => JSON.parse(line) as SessionRecord)
  }
  return { dir, workspace, file, root, loader, errors, readLog, dispose }
}

/** cordis.yml entries of the core plugins and the goal domain, in load order; `model` is the model entry's config. */
export function coreEntries({ dir, workspace }: ProjectPaths, model?: Record<string, unknown>): string {
  return `- id: session-store
  name: '@goalkeeper/session-jsonl'
  config: { dir: ${JSON.stringify(path.join(dir, 'sessions'))} }
- id: session
  name: '@goalkeeper/session'
- id: model
  name: '@goalkeeper/model'${model ? `\n  config: ${JSON.stringify(model)}` : ''}
- id: tools
  name: '@goalkeeper/tools'
- id: workspace-tools
  name: '@goalkeeper/workspace-tools'
  config: { root: ${JSON.stringify(workspace)} }
- id: agent-loop
  name: '@goalkeeper/agent-loop'
- id: goal
  name: '@goalkeeper/goal'
- id: tool-goal
  name: '@goalkeeper/tool-goal'
`
}

/**
 * The core entries, every policy plugin of the repository's cordis.yml with its defaults (no config, as
 * there), and the round driver: the composition the policies ship in. `model` configures the model entry
 * (e.g. the scripted provider's context window, for runs that compact).
 */
export function defaultPolicies(paths: ProjectPaths, model?: Record<string, unknown>): string {
  return `${coreEntries(paths, model)}- id: loop-guard
  name: '@goalkeeper/loop-guard'
- id: mistake-limit
  name: '@goalkeeper/mistake-limit'
- id: no-progress
  name: '@goalkeeper/no-progress'
- id: goal-session
  name: '@goalkeeper/goal-session'
`
}
