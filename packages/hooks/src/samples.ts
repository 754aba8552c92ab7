import path from 'node:path'
import type { HookEvent } from './events.ts'
import type { MatchTarget } from './matcher.ts'

/** A made-up occurrence of an event, for `goalkeeper hooks test EVENT`: the stdin fields and what matchers see. */
export interface SampleEvent {
  fields: Record<string, unknown>
  target: MatchTarget
}

/** A sample of `event` in workspace `cwd`; `tool` picks the tool of the tool events (default run_command). */
export function sampleEvent(event: HookEvent, cwd: string, tool = 'run_command'): SampleEvent {
  const args: Record<string, unknown> = tool === 'run_command' ? { command: 'npm test' } : { path: 'src/index.ts' }
  const toolFields = {
    tool_name: tool,
    tool_input: typeof args.path === 'string' ? { ...args, file_path: path.join(cwd, args.path) } : args,
    tool_use_id: 'call_sample',
  }
  const toolTarget: MatchTarget = { tool, command: args.command as string | undefined, path: args.path as string | undefined }
  switch (event) {
    case 'session-start': return { fields: { source: 'startup' }, target: { value: 'startup' } }
    case 'session-end': return { fields: { reason: 'exit' }, target: { value: 'exit' } }
    case 'prompt-submit': return { fields: { prompt: 'Fix the failing test in src/index.ts' }, target: {} }
    case 'before-tool-call': return { fields: toolFields, target: toolTarget }
    case 'after-tool-call': return { fields: { ...toolFields, tool_response: { ok: true, content: 'sample output' } }, target: toolTarget }
    case 'turn-end': return { fields: { stop_hook_active: false, last_assistant_message: 'Done: the test passes.' }, target: {} }
    case 'before-compact': return { fields: { trigger: 'auto', custom_instructions: '' }, target: { value: 'auto' } }
    case 'needs-input': return {
      fields: { message: `goalkeeper needs your permission to use ${tool}`, notification_type: 'permission_prompt', tool_name: tool, why: 'a sample question' },
      target: { value: 'permission_prompt' },
    }
    case 'goal-changed': return {
      fields: {
        goal_event: 'completed',
        goal: { id: 'goal_sample', objective: 'Make the tests pass', phase: 'complete', revision: 3, maxGoalRounds: 20, roundsStarted: 4, createdAt: 0, updatedAt: 0 },
      },
      target: { value: 'completed' },
    }
  }
}
