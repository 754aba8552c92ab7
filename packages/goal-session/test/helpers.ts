import { afterEach, expect } from 'vitest'
import type { Context } from 'cordis'
import type { Agent } from '@goalkeeper/agent-loop'
import type { SessionRecord, UserMessage } from '@goalkeeper/session'
import { createHarness, type Harness, type HarnessOptions } from '@goalkeeper/test-kit'

export interface DriverSetup {
  h: Harness
  agent: Agent
  driver: Awaited<ReturnType<Harness['load']>>
}

const harnesses: Harness[] = []

// A driver listener that fails (a move its round's life does not allow, a throw) disarms quietly; no test expects one.
afterEach(() => {
  const failures = harnesses.splice(0).flatMap((h) => h.errors().filter((line) => / failed for agent /.test(line)))
  expect(failures).toEqual([])
})

/** The real stack plus goal (and tool-goal when asked) and the driver, with one agent. */
export async function setup(options: HarnessOptions & { toolGoal?: boolean; driver?: boolean } = {}): Promise<DriverSetup> {
  const h = await createHarness(options)
  harnesses.push(h)
  try {
    await h.load(await import('@goalkeeper/goal'), {})
    if (options.toolGoal) await h.load(await import('@goalkeeper/tool-goal'), {})
    const agent = await h.createAgent()
    const driver = options.driver === false ? undefined! : await h.load(await import('../src/index.ts'))
    return { h, agent, driver }
  } catch (error) {
    await h.dispose()
    throw error
  }
}

/** Resolves with the args of the next `name` event whose args satisfy `predicate`. */
export function nextEvent<A extends unknown[]>(root: Context, name: string, predicate: (...args: A) => boolean = () => true): Promise<A> {
  return new Promise((resolve) => {
    const dispose = root.on(name as any, ((...args: A) => {
      if (!predicate(...args)) return
      dispose()
      resolve(args)
    }) as any)
  })
}

export function isGoalMessage(message: UserMessage): boolean {
  return message.source?.kind === 'goal'
}

/** Admitted goal rounds, in order, as `round@revision`. */
export function admittedRounds(records: readonly SessionRecord[]): string[] {
  return records.filter((r) => r.type === 'user/message' && isGoalMessage(r.data as UserMessage))
    .map((r) => {
      const source = (r.data as UserMessage).source as { round: number; revision: number }
      return `${source.round}@${source.revision}`
    })
}

/** Each turn's admitted user messages, by source kind (`human`, `goal:1`, `plugin`). */
export function turnsBySource(records: readonly SessionRecord[]): string[][] {
  const turns: string[][] = []
  for (const record of records) {
    if (record.type === 'turn/start') turns.push([])
    if (record.type === 'user/message') {
      const { source } = record.data as UserMessage
      turns[turns.length - 1].push(source.kind === 'goal' ? `goal:${source.round}` : source.kind)
    }
  }
  return turns
}

export function outcomes(records: readonly SessionRecord[]): string[] {
  return records.filter((r) => r.type === 'turn/end').map((r) => (r.data as { outcome: { kind: string } }).outcome.kind)
}

export function recordsOf(records: readonly SessionRecord[], type: string): unknown[] {
  return records.filter((r) => r.type === type).map((r) => r.data)
}
