// Scripted model steps, for tests that push replies onto the `scripted` provider.
import type { ScriptResponse, ScriptToolCall } from '@goalkeeper/model'

export const call = (name: string, args: Record<string, unknown> | string = {}): ScriptToolCall => ({ name, arguments: args })
export const tools = (...calls: ScriptToolCall[]): ScriptResponse => ({ toolCalls: calls })
export const done = (text = 'done'): ScriptResponse => ({ text })
/** A step that reads a.txt, the file most policy tests put in the workspace. */
export const readA = (): ScriptResponse => tools(call('read_file', { path: 'a.txt' }))
export const repeat = <T>(count: number, make: (i: number) => T): T[] => Array.from({ length: count }, (_, i) => make(i))
