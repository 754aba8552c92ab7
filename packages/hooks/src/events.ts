/**
 * The events a hook can be attached to: goalkeeper's name, and the Claude Code name where the event
 * corresponds (goal-changed has no counterpart there; its second spelling is ours). Either spelling is
 * accepted in cordis.yml; the Claude Code name is what a hook reads as `hook_event_name`.
 */
export const HOOK_EVENTS = {
  'session-start': 'SessionStart',
  'session-end': 'SessionEnd',
  'prompt-submit': 'UserPromptSubmit',
  'before-tool-call': 'PreToolUse',
  'after-tool-call': 'PostToolUse',
  'turn-end': 'Stop',
  'goal-changed': 'GoalChanged',
  'before-compact': 'PreCompact',
  'needs-input': 'Notification',
} as const

export type HookEvent = keyof typeof HOOK_EVENTS
export type ClaudeEventName = (typeof HOOK_EVENTS)[HookEvent]

export const EVENT_NAMES = Object.keys(HOOK_EVENTS) as HookEvent[]
/** Every accepted spelling, for the config schema. */
export const EVENT_SPELLINGS: string[] = [...EVENT_NAMES, ...Object.values(HOOK_EVENTS)]

const bySpelling = new Map<string, HookEvent>(EVENT_NAMES.flatMap((event) => [[event, event], [HOOK_EVENTS[event], event]]))

/** The event a spelling names (either spelling), or undefined. */
export function parseEvent(name: string): HookEvent | undefined {
  return bySpelling.get(name)
}
