import type { Context, Logger } from 'cordis'
import { deepFreeze, describeError } from '@goalkeeper/kit'
import type { ToolDenialInfo, ToolRewriteInfo } from '@goalkeeper/session'
import type { Entry, ToolCallContext, ToolCallReview, ToolCallVerdict, ToolDefinition } from './types.ts'
import { findUnsafe } from './arguments.ts'
import { describeErrors } from './schema.ts'

/** `denied.by` of a denial the pipeline makes itself, for a listener that failed or broke the protocol. */
export const PIPELINE = 'tools'
const MAX_BY_CHARS = 64

/** How the review of one call ended: run it with these arguments, deny it, or stop because the call was aborted. */
export type ReviewOutcome =
  /** `args` are frozen: what the listeners agreed to, also what `tool/after-call` reports. */
  | { kind: 'run'; args: Readonly<Record<string, unknown>>; rewrites: ToolRewriteInfo[] }
  | { kind: 'deny'; denial: ToolDenialInfo; rewrites: ToolRewriteInfo[] }
  | { kind: 'aborted' }

class Review implements ToolCallReview {
  readonly original: Readonly<Record<string, unknown>>
  arguments: Readonly<Record<string, unknown>>
  readonly rewrites: ToolRewriteInfo[] = []
  /** Set when the innermost step runs: every listener has had its say, so the arguments are final. */
  sealed = false
  /** The innermost step ran: an `allow` passed through every listener. */
  asked = false

  constructor(private entry: Entry, readonly call: ToolCallContext, args: Record<string, unknown>, private maxArgumentChars: number) {
    this.original = deepFreeze(structuredClone(args))
    this.arguments = this.original
  }

  get name(): string {
    return this.entry.tool.name
  }

  get tool(): ToolDefinition {
    return this.entry.tool
  }

  rewrite(args: Record<string, unknown>, by: string, reason?: string): void {
    const name = this.entry.tool.name
    if (this.sealed) throw new Error(`tool/before-call: rewrite() of "${name}" after next(): the listeners inside have already judged the arguments; rewrite before calling next()`)
    if (typeof by !== 'string' || !by.trim()) throw new TypeError(`tool/before-call: rewrite() of "${name}" needs \`by\`, the name of the plugin that rewrites`)
    if (reason !== undefined && typeof reason !== 'string') throw new TypeError(`tool/before-call: the reason of a rewrite of "${name}" must be a string`)
    // A JSON round trip: what runs is exactly what is recorded, as if the model had sent it.
    const text = JSON.stringify(args)
    const copy: unknown = text === undefined ? undefined : JSON.parse(text)
    if (!copy || typeof copy !== 'object' || Array.isArray(copy)) throw new TypeError(`tool/before-call: ${by} rewrote the arguments of "${name}" to something that is not a JSON object`)
    const unsafe = findUnsafe(copy)
    if (unsafe) throw new TypeError(`tool/before-call: ${by} rewrote the arguments of "${name}" unsafely: ${unsafe}`)
    if (!this.entry.validate(copy)) {
      throw new TypeError(`tool/before-call: ${by} rewrote the arguments of "${name}" against its schema: ${describeErrors(this.entry.validate.errors).join('; ')}`)
    }
    const final = JSON.stringify(copy)
    if (final.length > this.maxArgumentChars) throw new TypeError(`tool/before-call: ${by} rewrote the arguments of "${name}" to ${final.length} characters; the limit is ${this.maxArgumentChars}`)
    if (final === JSON.stringify(this.arguments)) return
    this.arguments = deepFreeze(copy as Record<string, unknown>)
    this.rewrites.push({ by: by.trim().slice(0, MAX_BY_CHARS), ...(reason ? { reason } : {}), arguments: final })
  }
}

/**
 * Runs the `tool/before-call` waterfall for one validated call (DESIGN.md section 5). The call runs only on
 * `allow` that passed through every listener; a throwing listener, a verdict that is not one, or an `allow`
 * that skipped the listeners inside it denies the call (logged). An abort of the call's signal ends the
 * review at once: a listener that waits (for a person, say) never holds a cancelled turn.
 */
export async function reviewCall(ctx: Context, logger: Logger, maxArgumentChars: number, entry: Entry, args: Record<string, unknown>, call: ToolCallContext): Promise<ReviewOutcome> {
  const review = new Review(entry, call, args, maxArgumentChars)
  const inner = async (): Promise<ToolCallVerdict> => {
    review.sealed = review.asked = true
    return { kind: 'allow' }
  }
  let verdict: unknown
  let failure: string | undefined
  const { signal } = call
  let onAbort!: () => void
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted')
    signal.addEventListener('abort', onAbort, { once: true })
  })
  const running = ctx.waterfall('tool/before-call', review, inner)
  try {
    const settled = await Promise.race([running, aborted])
    if (settled === 'aborted' || signal.aborted) return { kind: 'aborted' }
    verdict = settled
  } catch (error) {
    if (signal.aborted) return { kind: 'aborted' }
    failure = `a tool/before-call listener failed: ${describeError(error)}`
    logger.error('tool/before-call for %s (call %s): %s\n%s', entry.tool.name, call.callId, failure, describeError(error, { stack: true }))
  } finally {
    signal.removeEventListener('abort', onAbort)
    // A listener still waiting after an abort may settle later; its verdict no longer matters.
    running.catch(() => {})
  }
  review.sealed = true
  const { rewrites } = review
  if (failure) return { kind: 'deny', denial: { by: PIPELINE, reason: failure }, rewrites }
  const problem = checkVerdict(verdict, review)
  if (problem) {
    logger.error('tool/before-call for %s (call %s): %s', entry.tool.name, call.callId, problem)
    return { kind: 'deny', denial: { by: PIPELINE, reason: problem }, rewrites }
  }
  const checked = verdict as ToolCallVerdict
  if (checked.kind === 'deny') return { kind: 'deny', denial: { by: checked.by.trim().slice(0, MAX_BY_CHARS), reason: checked.reason.trim() }, rewrites }
  return { kind: 'run', args: review.arguments, rewrites }
}

/** Why `verdict` cannot be acted on, or undefined. An allow is only trusted if every listener inside was asked. */
function checkVerdict(verdict: unknown, review: Review): string | undefined {
  const v = verdict as { kind?: unknown; by?: unknown; reason?: unknown } | null | undefined
  if (v?.kind === 'allow') {
    return review.asked ? undefined : 'a tool/before-call listener returned allow without calling next(), which would skip the listeners inside it'
  }
  if (v?.kind === 'deny') {
    if (typeof v.by !== 'string' || !v.by.trim()) return 'a tool/before-call listener denied the call without naming itself (`by`)'
    if (typeof v.reason !== 'string' || !v.reason.trim()) return `${v.by.trim()} denied the call without a reason`
    return undefined
  }
  return `a tool/before-call listener returned ${describe(verdict)}, not { kind: 'allow' } or { kind: 'deny', by, reason }`
}

function describe(value: unknown): string {
  if (value === undefined || value === null) return String(value)
  try {
    return JSON.stringify(value)?.slice(0, 200) ?? typeof value
  } catch {
    return typeof value
  }
}
