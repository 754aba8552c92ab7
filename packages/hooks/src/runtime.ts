import type { Context, Logger } from 'cordis'
import { clip, describeError, liveMasker } from '@goalkeeper/kit'
import type { Session } from '@goalkeeper/session'
import type {} from '@goalkeeper/permissions'
import { type HookAnswer, readAnswer } from './answer.ts'
import type { HookSpecConfig, HooksConfig } from './config.ts'
import { HOOK_EVENTS, type HookEvent, parseEvent } from './events.ts'
import { compileMatcher, type MatchTarget } from './matcher.ts'
import { HOOK_RUN_RECORD, type HookRunRecord } from './records.ts'
import { hookEnv, hookInput } from './payload.ts'
import { type ProcessResult, runCommand } from './runner.ts'

/** One configured hook, ready to match and run. */
export interface Hook {
  event: HookEvent
  /** For logs and records: its `name`, else its command. */
  label: string
  command: string
  timeoutMs: number
  maxOutput: number
  matches(target: MatchTarget): boolean
}

/** One finished run: the hook, what its process did, and what its answer says. */
export interface HookRun {
  hook: Hook
  result: ProcessResult
  answer: HookAnswer
}

/** Who a run is for: the agent's session (for the record and the payload) and where in it. */
export interface RunScope {
  session?: Pick<Session, 'id' | 'file' | 'header' | 'append'>
  cwd?: string
  turn?: number
  step?: number
  callId?: string
}

export function compileHooks(specs: readonly HookSpecConfig[]): Hook[] {
  return specs.map((spec) => ({
    event: parseEvent(spec.event)!,
    label: spec.name?.trim() || clip(spec.command.trim().replace(/\s+/g, ' '), 80),
    command: spec.command,
    timeoutMs: spec.timeout * 1000,
    maxOutput: spec.maxOutput,
    matches: compileMatcher(spec.matcher),
  }))
}

const FAILURES = new Set(['failed', 'timeout', 'garbage'])
export const isFailure = (run: HookRun) => FAILURES.has(run.answer.outcome)

function decisionsOf(answer: HookAnswer): string[] {
  const decisions: string[] = []
  if (answer.block !== undefined) decisions.push('block')
  if (answer.permission) decisions.push(answer.permission)
  if (answer.updatedInput) decisions.push('rewrite')
  if (answer.context) decisions.push('context')
  if (answer.stop !== undefined) decisions.push('stop')
  return decisions
}

/**
 * Runs the hooks of an event: the matching ones at once (as Claude Code does), each with the event as JSON on
 * stdin, and records every run in the session. Knows nothing of what an answer means for the agent: the
 * listeners decide that.
 */
export class HookRuntime {
  private running = new Set<Promise<unknown>>()
  private masker = liveMasker()
  readonly logger: Logger

  constructor(private ctx: Context, readonly hooks: readonly Hook[], readonly config: HooksConfig) {
    this.logger = ctx.logger('hooks')
  }

  has(event: HookEvent): boolean {
    return this.hooks.some((hook) => hook.event === event)
  }

  /** The hooks of `event` that match, in config order. */
  matching(event: HookEvent, target: MatchTarget): Hook[] {
    return this.hooks.filter((hook) => hook.event === event && hook.matches(target))
  }

  /** Runs the matching hooks of `event` with `fields` (the event's own stdin fields); resolves when all ended. */
  run(event: HookEvent, scope: RunScope, fields: Record<string, unknown>, target: MatchTarget = {}): Promise<HookRun[]> {
    const hooks = this.matching(event, target)
    if (!hooks.length) return Promise.resolve([])
    const cwd = scope.cwd ?? scope.session?.header.cwd ?? process.cwd()
    const input = hookInput(event, { ...scope, cwd, permissionMode: this.permissionMode() }, fields)
    const env = hookEnv(event, cwd)
    const work = Promise.all(hooks.map(async (hook): Promise<HookRun> => {
      const result = await runCommand(hook.command, { input, cwd, env, timeoutMs: hook.timeoutMs, maxOutput: hook.maxOutput })
      return { hook, result, answer: readAnswer(event, result, hook.timeoutMs) }
    })).then((runs) => {
      // Recorded in config order, whichever ended first, so a log reads the same every time.
      for (const run of runs) this.report(run, scope)
      return runs
    })
    this.running.add(work)
    void work.finally(() => this.running.delete(work))
    return work
  }

  /** Runs in the background (notifications); the plugin's unload still waits for them. */
  fire(event: HookEvent, scope: RunScope, fields: Record<string, unknown>, target?: MatchTarget) {
    void this.run(event, scope, fields, target).catch((error) => this.logger.error('%s hooks failed: %s', event, describeError(error)))
  }

  /** Resolves when every run started so far has ended (each is bounded by its timeout). */
  async drain() {
    while (this.running.size) await Promise.allSettled([...this.running])
  }

  mask(text: string): string {
    return this.masker.mask(text)
  }

  private permissionMode(): string | undefined {
    return this.ctx.get('permissions')?.mode
  }

  private report(run: HookRun, scope: RunScope) {
    const { hook, result, answer } = run
    const name = HOOK_EVENTS[hook.event]
    if (answer.problem) this.logger.warn('%s hook "%s" %s: %s', name, this.mask(hook.label), answer.outcome, this.mask(answer.problem))
    if (answer.systemMessage) this.logger.warn('%s hook "%s": %s', name, this.mask(hook.label), this.mask(answer.systemMessage))
    if (answer.stop !== undefined) this.logger.warn('%s hook "%s" stops the agent: %s', name, this.mask(hook.label), this.mask(answer.stop))
    const decisions = decisionsOf(answer)
    const record: HookRunRecord = {
      event: hook.event,
      hook: this.mask(hook.label),
      exitCode: result.exitCode,
      ...(result.signal ? { signal: result.signal } : {}),
      durationMs: result.durationMs,
      outcome: answer.outcome,
      ...(decisions.length ? { decisions } : {}),
      ...(answer.problem ? { problem: this.mask(answer.problem) } : {}),
      ...(result.outputCut ? { outputCut: true as const } : {}),
      ...(scope.turn !== undefined ? { turn: scope.turn } : {}),
      ...(scope.step !== undefined ? { step: scope.step } : {}),
      ...(scope.callId !== undefined ? { callId: scope.callId } : {}),
    }
    if (!scope.session) return
    try {
      scope.session.append(HOOK_RUN_RECORD, record)
    } catch (error) {
      // A session closed meanwhile (a session-end hook at shutdown) keeps no record; the log line stays.
      this.logger.debug('could not record the %s hook run: %s', name, describeError(error))
    }
  }
}
