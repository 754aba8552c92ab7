import type { HookSpecConfig } from './config.ts'
import { HOOK_EVENTS, parseEvent } from './events.ts'

/** One line for a person: `before-tool-call (PreToolUse), matcher Bash, 60 s: ./guard.sh`. */
export function describeHook(spec: HookSpecConfig): string {
  const event = parseEvent(spec.event)
  const matcher = spec.matcher === undefined || spec.matcher === ''
    ? ''
    : `, matcher ${typeof spec.matcher === 'string' ? spec.matcher : Object.entries(spec.matcher).filter(([, v]) => v !== undefined).map(([k, v]) => `${k} ${v}`).join(', ')}`
  const name = spec.name ? ` "${spec.name}"` : ''
  return `${event} (${event ? HOOK_EVENTS[event] : '?'})${name}${matcher}, ${spec.timeout} s: ${spec.command}`
}
