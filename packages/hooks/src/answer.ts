import { clip, isRecord } from '@goalkeeper/kit'
import type { HookEvent } from './events.ts'
import type { ProcessResult } from './runner.ts'

/**
 * How a run went: `ok` (exit 0, its output understood), `blocked` (exit 2: stderr is the reason), `failed`
 * (any other exit, a signal, or it could not start), `timeout` (killed at its timeout), `garbage` (stdout that
 * looks like JSON and is not a valid answer).
 */
export type HookOutcome = 'ok' | 'blocked' | 'failed' | 'timeout' | 'garbage'

/** What one hook run says, in the Claude Code contract's terms, read from its exit code and output. */
export interface HookAnswer {
  outcome: HookOutcome
  /** Why it failed, for logs and the record. */
  problem?: string
  /** Exit 2 (stderr), or `decision: "block"` (`reason`): refuse the prompt or call, note to the model, continue at a stop. */
  block?: string
  /** `hookSpecificOutput.permissionDecision` (a `decision: "approve"` of older scripts is `allow`). */
  permission?: 'allow' | 'deny' | 'ask'
  permissionReason?: string
  /** `hookSpecificOutput.updatedInput`: the arguments the call should run with instead. */
  updatedInput?: Record<string, unknown>
  /** `hookSpecificOutput.additionalContext`, or plain stdout where the event takes it (session-start, prompt-submit). */
  context?: string
  /** `continue: false`: stop the agent, with `stopReason`. */
  stop?: string
  /** `systemMessage`: a line for the person, logged. */
  systemMessage?: string
}

/** Events whose plain stdout (not JSON) is context for the model, as in Claude Code. */
const PLAIN_TEXT_IS_CONTEXT = new Set<HookEvent>(['session-start', 'prompt-submit'])

const trimmed = (text: string) => text.trim()
const lastLines = (text: string) => clip(trimmed(text).split('\n').slice(-5).join('\n'), 500)

/** Reads one finished run. */
export function readAnswer(event: HookEvent, result: ProcessResult, timeoutMs: number): HookAnswer {
  if (result.spawnError !== undefined) return { outcome: 'failed', problem: `could not start: ${result.spawnError}` }
  if (result.timedOut) return { outcome: 'timeout', problem: `killed after ${timeoutMs / 1000} s (its timeout)` }
  if (result.signal) return { outcome: 'failed', problem: `killed by ${result.signal}${result.stderr.trim() ? `: ${lastLines(result.stderr)}` : ''}` }
  if (result.exitCode === 2) {
    const reason = trimmed(result.stderr)
    return { outcome: 'blocked', block: reason || 'a hook refused without saying why (exit 2, nothing on stderr)' }
  }
  if (result.exitCode !== 0) {
    return { outcome: 'failed', problem: `exit ${result.exitCode}${result.stderr.trim() ? `: ${lastLines(result.stderr)}` : ''}` }
  }
  const out = trimmed(result.stdout)
  if (!out) return { outcome: 'ok' }
  if (!out.startsWith('{') && !out.startsWith('[')) {
    // Plain text: context where the contract makes it so, otherwise only for the transcript (ignored here).
    return PLAIN_TEXT_IS_CONTEXT.has(event) ? { outcome: 'ok', context: out } : { outcome: 'ok' }
  }
  let value: unknown
  try {
    value = JSON.parse(out)
  } catch {
    return { outcome: 'garbage', problem: result.outputCut ? 'its JSON output was cut at maxOutput and can not be read' : `its output is not valid JSON: ${clip(out, 120)}` }
  }
  return readJson(value)
}

function readJson(value: unknown): HookAnswer {
  if (!isRecord(value)) return { outcome: 'garbage', problem: 'its JSON output is not an object' }
  const answer: HookAnswer = { outcome: 'ok' }
  const problems: string[] = []
  const text = (key: string, from: Record<string, unknown>): string | undefined => {
    const field = from[key]
    if (field === undefined || field === null) return undefined
    if (typeof field === 'string') return field
    problems.push(`${key} is not a string`)
    return undefined
  }
  const reason = text('reason', value)
  const decision = value.decision
  if (decision === 'block') answer.block = reason?.trim() || 'a hook refused without saying why (decision "block", no reason)'
  else if (decision === 'approve') answer.permission = 'allow'
  else if (decision !== undefined && decision !== null && decision !== '') problems.push(`decision ${JSON.stringify(decision)} is not "block" or "approve"`)
  if (value.continue === false) answer.stop = text('stopReason', value)?.trim() || 'a hook stopped the agent'
  else if (value.continue !== undefined && value.continue !== true) problems.push('continue is not a boolean')
  const systemMessage = text('systemMessage', value)
  if (systemMessage) answer.systemMessage = systemMessage
  const specific = value.hookSpecificOutput
  if (specific !== undefined && specific !== null) {
    if (!isRecord(specific)) problems.push('hookSpecificOutput is not an object')
    else {
      const permission = specific.permissionDecision
      if (permission === 'allow' || permission === 'deny' || permission === 'ask') answer.permission = permission
      else if (permission !== undefined && permission !== null) problems.push(`permissionDecision ${JSON.stringify(permission)} is not allow, deny or ask`)
      const permissionReason = text('permissionDecisionReason', specific)
      if (permissionReason) answer.permissionReason = permissionReason
      if (specific.updatedInput !== undefined && specific.updatedInput !== null) {
        if (isRecord(specific.updatedInput)) answer.updatedInput = specific.updatedInput
        else problems.push('updatedInput is not an object')
      }
      const context = text('additionalContext', specific)
      if (context?.trim()) answer.context = context.trim()
    }
  }
  if (problems.length) return { outcome: 'garbage', problem: `its JSON answer is not understood: ${problems.join('; ')}` }
  return answer
}
