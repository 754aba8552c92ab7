// Test helpers shared by the policy plugins' tests (tests may import anything; plugin code may not).
import fs from 'node:fs/promises'
import path from 'node:path'
import { expect, vi } from 'vitest'
import type { Fiber } from 'cordis'
import type { Agent } from '@goalkeeper/agent-loop'
import type { ModelRequest, ScriptResponse, ScriptToolCall } from '@goalkeeper/model'
import type { SessionRecord, TurnOutcome, UserMessage } from '@goalkeeper/session'
import { createHarness, type Harness } from '../tests/harness.ts'

export type { Harness }

/** The shared core harness, with `files` (workspace-relative path -> content) written into its workspace. */
export async function harnessWith(files: Record<string, string> = {}): Promise<Harness> {
  const harness = await createHarness()
  try {
    for (const [file, content] of Object.entries(files)) await fs.writeFile(path.join(harness.workspace, file), content)
  } catch (error) {
    await harness.dispose()
    throw error
  }
  return harness
}

export const call = (name: string, args: Record<string, unknown> | string = {}): ScriptToolCall => ({ name, arguments: args })
export const tools = (...calls: ScriptToolCall[]): ScriptResponse => ({ toolCalls: calls })
export const done = (text = 'done'): ScriptResponse => ({ text })
/** A step that reads a.txt, the file most tests put in the workspace. */
export const readA = (): ScriptResponse => tools(call('read_file', { path: 'a.txt' }))
export const repeat = <T>(count: number, make: (i: number) => T): T[] => Array.from({ length: count }, (_, i) => make(i))

/** Sends a human prompt and waits until the agent has finished everything it triggered. */
export async function prompt(agent: Agent, text: string, source?: UserMessage['source']): Promise<void> {
  agent.send({ content: text, ...(source ? { source } : {}) })
  await agent.whenIdle()
}

/** Text of every user-role message in a model request (human prompts, hints, steered guidance). */
export function userTexts(request: ModelRequest): string[] {
  return request.messages.flatMap((m) => (m.role === 'user' ? [m.content.map((b) => b.text).join('')] : []))
}

export function pluginMessages(records: SessionRecord[], name: string): string[] {
  return records
    .filter((r) => r.type === 'user/message' && (r.data as UserMessage).source.kind === 'plugin' && (r.data as any).source.name === name)
    .map((r) => (r.data as UserMessage).content.map((b) => b.text).join(''))
}

export function outcomes(records: SessionRecord[]): TurnOutcome[] {
  return records.filter((r) => r.type === 'turn/end').map((r) => (r.data as { outcome: TurnOutcome }).outcome)
}

/** A promise with its resolver, for awaiting an event a listener reports. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

/** Watches timers with one distinctive delay: which were started, and which of those were cleared. */
export function watchTimers(delay: number) {
  const started = new Set<unknown>()
  const cleared = new Set<unknown>()
  const realSet = globalThis.setTimeout
  const realClear = globalThis.clearTimeout
  vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const handle = realSet(fn, ms, ...args)
    if (ms === delay) started.add(handle)
    return handle
  }) as typeof setTimeout)
  vi.spyOn(globalThis, 'clearTimeout').mockImplementation((handle) => {
    if (started.has(handle)) cleared.add(handle)
    return realClear(handle)
  })
  return { started, cleared }
}

/** Unloads `fiber` while one watched timer is pending, and checks that the unload cleared exactly that timer. */
export async function expectUnloadClearsTimer(fiber: Fiber, timers: ReturnType<typeof watchTimers>): Promise<void> {
  expect(timers.started.size).toBe(1)
  expect(timers.cleared.size).toBe(0)
  await fiber.dispose()
  expect(timers.cleared).toEqual(timers.started)
}
