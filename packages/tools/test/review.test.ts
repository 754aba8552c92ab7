import { Context, Logger, type Exporter } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ToolCallReport, ToolCallReview, ToolCallVerdict } from '../src/index.ts'
import { call, callContext, setup } from './helpers.ts'

type Listener = (review: ToolCallReview, next: () => Promise<ToolCallVerdict>) => Promise<ToolCallVerdict>

let root: Context
let runs: Record<string, unknown>[]
let errors: string[]
beforeEach(async () => {
  root = await setup()
  runs = []
  errors = []
  const exporter: Exporter = { levels: { default: 0 }, formatters: { c: String }, export: (m) => void errors.push(Logger.format(exporter, m)) }
  root.logger.exporter(exporter)
  root.tools.register({
    name: 'run_command',
    description: 'run',
    parameters: {
      type: 'object',
      properties: { command: { type: 'string' }, timeout_ms: { type: 'integer', minimum: 1 }, shell: { type: 'string', default: 'sh' } },
      required: ['command'],
      additionalProperties: false,
    },
    execute: (args) => {
      runs.push(args)
      // A tool may change its own arguments without touching what the listeners saw.
      args.command = 'changed by the tool'
      return `ran ${JSON.stringify({ ...args, command: undefined })}`
    },
  })
})
afterEach(async () => {
  await root.fiber.dispose()
})

const run = (args: unknown, signal?: AbortSignal) => root.tools.execute(call('run_command', args), callContext(signal))
const listen = (listener: Listener, prepend = false) => root.on('tool/before-call', listener, { prepend })

describe('tool/before-call', () => {
  it('runs the call unchanged when no listener objects, and shows listeners the validated arguments', async () => {
    const seen: ToolCallReview[] = []
    listen(async (review, next) => {
      seen.push(review)
      return next()
    })
    const result = await run({ command: 'ls' })
    expect(result).toEqual({ ok: true, content: 'ran {"shell":"sh"}' })
    expect(runs).toEqual([{ command: 'changed by the tool', shell: 'sh' }])
    const [review] = seen
    expect(review.name).toBe('run_command')
    expect(review.tool.name).toBe('run_command')
    expect(review.call).toMatchObject({ turn: 2, step: 3, callId: 'call_1', cwd: '/nowhere' })
    // Defaults are filled before review, and the tool's own change did not reach what listeners saw.
    expect(review.original).toEqual({ command: 'ls', shell: 'sh' })
    expect(review.arguments).toBe(review.original)
    expect(Object.isFrozen(review.original)).toBe(true)
  })

  it('turns a denial into an error result with the reason, and the tool does not run', async () => {
    listen(async (review, next) => (String(review.arguments.command).includes('rm -rf')
      ? { kind: 'deny', by: 'guard', reason: 'recursive deletes are not allowed' }
      : next()))
    const denied = await run({ command: 'rm -rf /' })
    expect(denied).toEqual({
      ok: false,
      content: 'The call was denied by guard: recursive deletes are not allowed',
      error: { code: 'DENIED', message: 'The call was denied by guard: recursive deletes are not allowed' },
      denied: { by: 'guard', reason: 'recursive deletes are not allowed' },
    })
    expect(runs).toEqual([])
    expect((await run({ command: 'ls' })).ok).toBe(true)
    expect(errors).toEqual([])
  })

  it('runs rewritten arguments, records each rewrite, and inner listeners see the rewritten ones', async () => {
    const inner: unknown[] = []
    listen(async (review, next) => {
      review.rewrite({ ...review.arguments, timeout_ms: 1000 }, 'cap', 'timeout capped at 1000 ms')
      return next()
    }, true)
    listen(async (review, next) => {
      inner.push(review.arguments)
      review.rewrite({ ...review.arguments, command: `${review.arguments.command} --color=never` }, 'no-color')
      return next()
    })
    const result = await run({ command: 'ls', timeout_ms: 900000 })
    expect(result.ok).toBe(true)
    expect(runs).toEqual([{ command: 'changed by the tool', timeout_ms: 1000, shell: 'sh' }])
    expect(inner).toEqual([{ command: 'ls', timeout_ms: 1000, shell: 'sh' }])
    expect(result.rewrites).toEqual([
      { by: 'cap', reason: 'timeout capped at 1000 ms', arguments: '{"command":"ls","timeout_ms":1000,"shell":"sh"}' },
      { by: 'no-color', arguments: '{"command":"ls --color=never","timeout_ms":1000,"shell":"sh"}' },
    ])
  })

  it('lets an outer listener judge the final arguments after next() and deny them', async () => {
    listen(async (review, next) => {
      const verdict = await next()
      return verdict.kind === 'allow' && review.arguments.command === 'rm -rf /' ? { kind: 'deny', by: 'final-check', reason: 'no' } : verdict
    }, true)
    listen(async (review, next) => {
      review.rewrite({ command: 'rm -rf /' }, 'prankster')
      return next()
    })
    const result = await run({ command: 'ls' })
    expect(result.error?.code).toBe('DENIED')
    expect(result.denied).toEqual({ by: 'final-check', reason: 'no' })
    // The rewrite that led there is recorded with the denial.
    expect(result.rewrites).toEqual([{ by: 'prankster', arguments: '{"command":"rm -rf /","shell":"sh"}' }])
    expect(runs).toEqual([])
  })

  it('does not record a rewrite that changes nothing', async () => {
    listen(async (review, next) => {
      review.rewrite({ command: 'ls' }, 'noop')
      return next()
    })
    const result = await run({ command: 'ls' })
    expect(result).toEqual({ ok: true, content: 'ran {"shell":"sh"}' })
  })

  const broken: [string, Listener, RegExp][] = [
    ['throws', async () => { throw new Error('listener bug') }, /a tool\/before-call listener failed: listener bug/],
    ['rewrites against the schema', async (review, next) => {
      review.rewrite({ command: 42 }, 'bad-rewrite')
      return next()
    }, /bad-rewrite rewrote the arguments of "run_command" against its schema: \/command must be string/],
    ['edits the frozen arguments in place', async (review, next) => {
      (review.arguments as Record<string, unknown>).command = 'rm -rf /'
      return next()
    }, /listener failed: Cannot assign to read only property 'command'/],
    ['rewrites after next()', async (review, next) => {
      const verdict = await next()
      review.rewrite({ command: 'rm -rf /' }, 'late')
      return verdict
    }, /rewrite\(\) of "run_command" after next\(\)/],
    ['allows without asking the listeners inside it', async () => ({ kind: 'allow' }), /returned allow without calling next\(\)/],
    ['returns no verdict', async () => undefined as never, /returned undefined, not \{ kind: 'allow' \}/],
    ['denies without saying who', async () => ({ kind: 'deny', reason: 'x' }) as never, /without naming itself/],
    ['denies without a reason', async () => ({ kind: 'deny', by: 'mute', reason: ' ' }), /mute denied the call without a reason/],
  ]
  for (const [what, listener, reason] of broken) {
    it(`denies the call, by "tools", when a listener ${what}, and logs it`, async () => {
      listen(listener, true)
      listen(async (_review, next) => next())
      const result = await run({ command: 'ls' })
      expect(result.error?.code).toBe('DENIED')
      expect(result.denied?.by).toBe('tools')
      expect(result.denied?.reason).toMatch(reason)
      expect(result.content).toBe(`The call was denied by tools: ${result.denied?.reason}`)
      expect(runs).toEqual([])
      expect(errors.join('\n')).toMatch(reason)
    })
  }

  it('gives up on a listener that waits when the call is aborted, at once', async () => {
    let started!: () => void
    const waiting = new Promise<void>((resolve) => (started = resolve))
    listen(async () => {
      started()
      return new Promise<ToolCallVerdict>(() => {})
    })
    const controller = new AbortController()
    const result = run({ command: 'ls' }, controller.signal)
    await waiting
    controller.abort()
    expect((await result).error?.code).toBe('ABORTED')
    expect(runs).toEqual([])
  })

  it('does not review calls that never validated', async () => {
    let reviews = 0
    listen(async (_review, next) => {
      reviews++
      return next()
    })
    expect((await run({ nope: 1 })).error?.code).toBe('INVALID_ARGUMENTS')
    expect((await root.tools.execute(call('missing', {}), callContext())).error?.code).toBe('UNKNOWN_TOOL')
    expect(reviews).toBe(0)
  })
})

describe('tool/after-call', () => {
  it('reports every call with its final arguments and result; a throwing observer is contained', async () => {
    const reports: ToolCallReport[] = []
    root.on('tool/after-call', () => {
      throw new Error('observer bug')
    })
    root.on('tool/after-call', (report) => void reports.push(report))
    listen(async (review, next) => {
      if (review.arguments.command === 'no') return { kind: 'deny', by: 'guard', reason: 'said no' }
      review.rewrite({ ...review.arguments, timeout_ms: 5 }, 'cap')
      return next()
    })
    const ran = await run({ command: 'ls' })
    const denied = await run({ command: 'no' })
    const invalid = await run('{')
    expect(reports.map((r) => [r.name, r.call.callId, r.arguments, r.result])).toEqual([
      ['run_command', 'call_1', { command: 'ls', timeout_ms: 5, shell: 'sh' }, ran],
      ['run_command', 'call_1', undefined, denied],
      ['run_command', 'call_1', undefined, invalid],
    ])
    expect(errors.join('\n')).toContain('observer bug')
  })
})
