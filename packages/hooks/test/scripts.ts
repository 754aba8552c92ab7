// Real hook scripts for the tests: written into a directory of their own, executable, run by `sh -c`.
import { readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { Agent } from '@goalkeeper/agent-loop'
import { isRecordOf, type SessionRecord } from '@goalkeeper/session'
import { call, done, type Harness, tools } from '@goalkeeper/test-kit'
import { HOOK_RUN_RECORD, type HookRunRecord } from '../src/index.ts'

/** A fresh directory for one test's scripts and files (removed with `removeBins`). */
const bins: string[] = []
export async function binDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-hooks-'))
  bins.push(dir)
  return dir
}
export async function removeBins() {
  for (const dir of bins.splice(0)) await fs.rm(dir, { recursive: true, force: true })
}

/** Writes `body` as an executable sh script named `name` in `dir`; returns its path. */
export async function script(dir: string, name: string, body: string): Promise<string> {
  const file = path.join(dir, name)
  await fs.writeFile(file, `#!/bin/sh\n${body.trim()}\n`, { mode: 0o755 })
  return file
}

/** Every `hook/run` record of a session. */
export const hookRuns = (records: readonly SessionRecord[]): HookRunRecord[] =>
  records.flatMap((r) => (r.type === HOOK_RUN_RECORD ? [r.data as HookRunRecord] : []))

/** The `tool/result` records of an agent's session. */
export const toolResults = (h: Harness, agent: Agent): Record<string, any>[] =>
  h.records(agent).flatMap((r) => (isRecordOf(r, 'tool/result') ? [r.data as Record<string, any>] : []))

/** One turn: the model makes `calls` (one step each), then answers "done". */
export async function turn(h: Harness, agent: Agent, calls: [string, Record<string, unknown>][], prompt = 'go') {
  h.scripted.push(...calls.map(([name, args]) => tools(call(name, args))), done())
  agent.send({ content: prompt })
  await agent.whenIdle()
}

/** Whether a process still runs (a zombie waiting for a reaper does not). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] !== 'Z'
  } catch {
    return false
  }
}
