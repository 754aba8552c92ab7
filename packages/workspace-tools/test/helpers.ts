import fs from 'node:fs/promises'
import { readFileSync, watch } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Context } from 'cordis'
import * as tools from '@goalkeeper/tools'
import type { ToolCallContext, ToolResult } from '@goalkeeper/tools'
import * as workspaceTools from '../src/index.ts'

export function callContext(cwd: string, signal = new AbortController().signal): ToolCallContext {
  return {
    agent: { id: 'agent-1', session: {} as never, steer: () => { throw new Error('not used') } },
    turn: 1,
    step: 1,
    callId: 'call_1',
    signal,
    turnSources: [{ kind: 'human' }],
    cwd,
  }
}

export interface Setup {
  root: Context
  dir: string
  /** The workspace root (the agent's cwd). */
  workspace: string
  /** A sibling of the workspace that must never be touched. */
  outside: string
  run(name: string, args: unknown, signal?: AbortSignal): Promise<ToolResult>
  /** Calls the tool's own execute (bypassing the pipeline's abort race) and returns its result or thrown error. */
  direct(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<unknown>
  dispose(): Promise<void>
}

export async function setup(config: Record<string, unknown> = {}): Promise<Setup> {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'gk-')))
  const workspace = path.join(dir, 'ws')
  const outside = path.join(dir, 'outside')
  await fs.mkdir(workspace)
  await fs.mkdir(outside)
  await fs.writeFile(path.join(outside, 'secret.txt'), 'top secret\n')
  const root = new Context()
  await root.plugin(tools, {})
  await root.plugin(workspaceTools, config)
  return {
    root,
    dir,
    workspace,
    outside,
    run: (name, args, signal) => root.tools.execute({ id: 'call_1', name, arguments: JSON.stringify(args) }, callContext(workspace, signal)),
    direct: async (name, args, signal) => {
      try {
        return await root.tools.get(name)!.execute(args, callContext(workspace, signal))
      } catch (error) {
        return error
      }
    },
    dispose: async () => {
      await root.fiber.dispose()
      await fs.rm(dir, { recursive: true, force: true })
    },
  }
}

/** True while `pid` is a live process; a zombie counts as gone (it has exited, only its reaping is pending). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return true
  }
}

/** Resolves with the content of `file` once it exists and is non-empty (commands write it via rename, atomically). */
export function waitForFile(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => {
      let text = ''
      try {
        text = readFileSync(file, 'utf8')
      } catch {}
      if (!text) return
      watcher.close()
      resolve(text)
    }
    // Watch first, then check, so a file created in between is not missed.
    const watcher = watch(path.dirname(file), check)
    watcher.on('error', reject)
    check()
  })
}
