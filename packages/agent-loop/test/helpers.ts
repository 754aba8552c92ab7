import { it as base } from 'vitest'
import type { Context, Events } from 'cordis'
import type { SessionRecord } from '@goalkeeper/session'
import type { ToolCallContext } from '@goalkeeper/tools'
import { createHarness, type CapturedEvent, type Harness } from '@goalkeeper/test-kit'

/** `it` with a fresh harness per test (real sessions, scripted model, the test tools below), disposed after it. */
export const it = base.extend<{ h: Harness }>({
  h: async ({}, use) => {
    const h = await createHarness({ workspaceTools: false })
    try {
      await h.load(testTools)
      await use(h)
    } finally {
      await h.dispose()
    }
  },
})

/**
 * Resolves with the arguments of the next `name` event that passes `filter`. On the `agent/prompt-submit`
 * waterfall the listener passes through (`return next()`), so the listeners after it still decide.
 */
export function nextEvent<K extends keyof Events>(root: Context, name: K, filter: (...args: Parameters<Events[K]>) => boolean = () => true) {
  const waterfall = name === 'agent/prompt-submit'
  return new Promise<Parameters<Events[K]>>((resolve) => {
    const dispose = root.on(name, ((...args: Parameters<Events[K]>) => {
      if (filter(...args)) {
        dispose()
        resolve(args)
      }
      if (waterfall) return (args.at(-1) as () => unknown)()
    }) as any)
  })
}

/** `type` of each record, or `type:detail` where the detail tells records of one type apart. */
export function describeRecord(record: SessionRecord): string {
  const data = record.data as any
  switch (record.type) {
    case 'turn/start': return `turn/start ${data.turn}`
    case 'step/start': case 'step/end': return `${record.type} ${data.turn}.${data.step}`
    case 'tool/call': return `tool/call ${data.name}`
    case 'tool/result': return `tool/result ${data.ok ? 'ok' : data.error?.code}`
    case 'turn/end': return `turn/end ${data.turn} ${data.outcome.kind}`
    case 'user/message': return `user/message ${data.content[0]?.text}`
    case 'input/queued': return `input/queued ${data.message.content[0]?.text}`
    default: return record.type
  }
}

/** Records after the header, described. */
export const describeRecords = (records: SessionRecord[]) => records.filter((r) => r.type !== 'session/header').map(describeRecord)

/** One line per captured event; `session/event` lines show the record. */
export function timeline(events: CapturedEvent[]): string[] {
  return events.map(({ name, args }) => {
    if (name === 'session/event') return describeRecord(args[1] as SessionRecord)
    if (name === 'agent/status') return `${name} ${args[1]}`
    if (name === 'agent/turn-end') return `${name} ${(args[2] as any).kind}`
    if (name === 'agent/step-end') return `${name} ${args[1]}.${args[2]}`
    if (name === 'agent/tool-start' || name === 'agent/tool-end') return `${name} ${(args[1] as any).name}`
    if (name === 'agent/error') return `${name} ${(args[2] as any).code}`
    return name
  })
}

export const text = (record: SessionRecord) => (record.data as any).content?.[0]?.text

/** Test tools: `echo` returns its text, `wait` returns only when its signal aborts, `context` reports its call context, `boom` throws. */
export const testTools = {
  name: 'test-tools',
  inject: ['tools'],
  apply(ctx: Context) {
    ctx.tools.register({
      name: 'echo',
      description: 'Returns the text it is given.',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      execute: (args: { text: string }) => args.text,
    })
    ctx.tools.register({
      name: 'wait',
      description: 'Waits until the call is aborted.',
      parameters: { type: 'object', properties: {} },
      execute: (_args: unknown, call: ToolCallContext) => new Promise<string>((resolve) => {
        ctx.emit('test/waiting' as any, call)
        call.signal.addEventListener('abort', () => resolve('stopped'), { once: true })
      }),
    })
    ctx.tools.register({
      name: 'context',
      description: 'Reports what the tool call context holds.',
      parameters: { type: 'object', properties: {} },
      execute: (_args: unknown, call: ToolCallContext) => JSON.stringify({
        turn: call.turn, step: call.step, callId: call.callId, cwd: call.cwd, turnSources: call.turnSources, agent: call.agent.id,
      }),
    })
    ctx.tools.register({
      name: 'boom',
      description: 'Always fails.',
      parameters: { type: 'object', properties: {} },
      execute: () => { throw new Error('boom failed') },
    })
  },
}

declare module 'cordis' {
  interface Events {
    'test/waiting'(call: ToolCallContext): void
  }
}
