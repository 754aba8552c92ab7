import type { ToolCall } from '@goalkeeper/model'
import { randomUUID } from 'node:crypto'

/** A `tool_calls` fragment as it came off the wire: any field may be missing or of the wrong type. */
export interface ToolCallDelta {
  index?: unknown
  id?: unknown
  function?: { name?: unknown; arguments?: unknown } | null
}

const str = (value: unknown) => (typeof value === 'string' && value ? value : undefined)

interface Partial { id: string; name: string; arguments: string }

/** Bound memory against a server that streams arguments or calls forever; far beyond any real step. */
export const MAX_TOOL_CALL_CHARS = 8 * 1024 * 1024
export const MAX_TOOL_CALLS = 1000

/**
 * Joins streamed `tool_calls` fragments into complete calls, kept in numbered slots. A wire `index`
 * normally is its slot, but a fragment with a new id under an index already in use starts a new
 * call in a slot after all others (some servers send every call as index 0).
 */
export class ToolCallAssembler {
  private slots = new Map<number, Partial>()
  /** The slot each wire index currently continues. */
  private byIndex = new Map<number, number>()
  private last: number | undefined
  private top = -1
  private chars = 0

  /** Adds a fragment; false once the calls exceed MAX_TOOL_CALLS or, together, MAX_TOOL_CALL_CHARS. */
  add(delta: ToolCallDelta): boolean {
    const id = str(delta.id)
    const index = Number.isInteger(delta.index) && (delta.index as number) >= 0 ? (delta.index as number) : undefined
    const slot = this.slotOf(index, id)
    let call = this.slots.get(slot)
    if (!call) {
      this.slots.set(slot, call = { id: '', name: '', arguments: '' })
      this.top = Math.max(this.top, slot)
    }
    this.last = slot
    if (id && !call.id) call.id = id
    const name = str(delta.function?.name)
    // Some servers repeat the full name on every fragment, others split it.
    if (name && name !== call.name) call.name += name
    const args = str(delta.function?.arguments) ?? ''
    call.arguments += args
    this.chars += (name?.length ?? 0) + args.length
    return this.chars <= MAX_TOOL_CALL_CHARS && this.slots.size <= MAX_TOOL_CALLS
  }

  /** The complete calls in slot order; the assembler is empty afterwards. */
  drain(): ToolCall[] {
    const done = [...this.slots.entries()].sort(([a], [b]) => a - b).map(([, call]) => ({
      // A server that omits ids still needs them paired with the tool results.
      id: call.id || `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
      name: call.name,
      arguments: call.arguments,
    }))
    this.slots.clear()
    this.byIndex.clear()
    this.last = undefined
    this.top = -1
    this.chars = 0
    return done
  }

  private nextSlot(): number {
    return this.top + 1
  }

  private slotOf(index: number | undefined, id: string | undefined): number {
    if (index !== undefined) {
      const slot = this.byIndex.get(index)
      const current = slot === undefined ? undefined : this.slots.get(slot)
      if (slot !== undefined && !(id && current?.id && id !== current.id)) return slot
      const fresh = slot === undefined && !this.slots.has(index) ? index : this.nextSlot()
      this.byIndex.set(index, fresh)
      return fresh
    }
    // Servers that omit `index` start a new call with a new id and continue the last one otherwise.
    if (id) {
      for (const [slot, call] of this.slots) if (call.id === id) return slot
      return this.nextSlot()
    }
    return this.last ?? 0
  }
}
