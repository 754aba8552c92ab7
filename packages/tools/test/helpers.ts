import { Context } from 'cordis'
import type { ToolCallContext } from '../src/index.ts'
import * as tools from '../src/index.ts'

/** A minimal agent: the registry only passes it through to tools. */
export function callContext(signal = new AbortController().signal): Omit<ToolCallContext, 'callId'> {
  return {
    agent: { id: 'agent-1', session: {} as never, steer: () => { throw new Error('not used') } },
    turn: 2,
    step: 3,
    signal,
    turnSources: [{ kind: 'human' }],
    cwd: '/nowhere',
  }
}

export async function setup(config: Record<string, unknown> = {}) {
  const root = new Context()
  await root.plugin(tools, config)
  return root
}

export const call = (name: string, args: unknown, id = 'call_1') => ({ id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) })
