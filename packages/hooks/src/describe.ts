import type { HookSpecConfig } from './config.ts'
import { HOOK_EVENTS, parseEvent } from './events.ts'

/**
 * For a person: `before-tool-call (PreToolUse), matcher Bash, 60 s: ./guard.sh`. A command of several lines
 * follows on lines of its own, indented, so what is approved is shown whole.
 */
export function describeHook(spec: HookSpecConfig): string {
  const event = parseEvent(spec.event)
  const matcher = spec.matcher === undefined || spec.matcher === ''
    ? ''
    : `, matcher ${typeof spec.matcher === 'string' ? spec.matcher : Object.entries(spec.matcher).filter(([, v]) => v !== undefined).map(([k, v]) => `${k} ${v}`).join(', ')}`
  const name = spec.name ? ` "${spec.name}"` : ''
  const head = `${event} (${event ? HOOK_EVENTS[event] : '?'})${name}${matcher}, ${spec.timeout} s:`
  const command = spec.command.trim()
  return command.includes('\n') ? `${head}\n${command.split('\n').map((line) => `    ${line}`).join('\n')}` : `${head} ${command}`
}
