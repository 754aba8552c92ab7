import type { Agent } from '@goalkeeper/agent-loop'
import type { Harness } from '@goalkeeper/test-kit'
import { call, done, tools } from '@goalkeeper/test-kit'

/** The `tool/result` records of one turn in which the scripted model makes `calls`, one step each. */
export async function runCalls(h: Harness, agent: Agent, calls: [string, Record<string, unknown>][]): Promise<Record<string, any>[]> {
  const before = h.records(agent).length
  h.scripted.push(...calls.map(([name, args]) => tools(call(name, args))), done())
  agent.send({ content: 'go' })
  await agent.whenIdle()
  return h.records(agent).slice(before).filter((record) => record.type === 'tool/result').map((record) => record.data as Record<string, any>)
}

export const commands = (...lines: string[]): [string, Record<string, unknown>][] => lines.map((command) => ['run_command', { command }])
