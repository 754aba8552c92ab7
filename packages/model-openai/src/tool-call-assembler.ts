import type { ToolCall } from '@goalkeeper/model'
import { randomUUID } from 'node:crypto'

export interface ToolCallDelta {
  index?: number
  id?: string
  function?: { name?: string; arguments?: string }
}

interface Partial { id: string; name: string; arguments: string }

/** Joins streamed `tool_calls` fragments into complete calls, keyed by their `index`. */
export class ToolCallAssembler {
  private calls = new Map<number, Partial>()
  private last: number | undefined

  get size(): number {
    return this.calls.size
  }

  add(delta: ToolCallDelta): void {
    const index = this.indexOf(delta)
    let call = this.calls.get(index)
    if (!call) this.calls.set(index, call = { id: '', name: '', arguments: '' })
    this.last = index
    if (delta.id && !call.id) call.id = delta.id
    const name = delta.function?.name
    // Some servers repeat the full name on every fragment, others split it.
    if (name && name !== call.name) call.name += name
    const args = delta.function?.arguments
    if (typeof args === 'string') call.arguments += args
  }

  /** The complete calls in index order; the assembler is empty afterwards. */
  drain(): ToolCall[] {
    const done = [...this.calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => ({
      // A server that omits ids still needs them paired with the tool results.
      id: call.id || `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
      name: call.name,
      arguments: call.arguments,
    }))
    this.calls.clear()
    this.last = undefined
    return done
  }

  // Servers that omit `index` start a new call with a new id and continue the last one otherwise.
  private indexOf(delta: ToolCallDelta): number {
    if (typeof delta.index === 'number') return delta.index
    if (delta.id) {
      for (const [index, call] of this.calls) if (call.id === delta.id) return index
      return this.calls.size ? Math.max(...this.calls.keys()) + 1 : 0
    }
    return this.last ?? 0
  }
}
