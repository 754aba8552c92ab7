import { describe, expect, it } from 'vitest'
import { createScriptedProvider } from '../src/index.ts'
import type { ModelChunk } from '../src/index.ts'
import { collect, finishOf, request, textOf } from './helpers.ts'

describe('scripted provider: step kinds', () => {
  it('streams reply text in several chunks, then usage and a stop finish', async () => {
    const provider = createScriptedProvider([{ text: 'The quick brown fox', usage: { inputTokens: 3, outputTokens: 4 } }])
    const chunks = await collect(provider)
    const texts = chunks.filter((c) => c.type === 'text')
    expect(texts.length).toBeGreaterThan(1)
    expect(textOf(chunks)).toBe('The quick brown fox')
    expect(chunks.slice(-2)).toEqual([
      { type: 'usage', usage: { inputTokens: 3, outputTokens: 4 } },
      { type: 'finish', reason: 'stop' },
    ])
  })

  it('keeps multi-code-point characters whole across chunks', async () => {
    const text = '😀😀😀😀😀'
    const chunks = await collect(createScriptedProvider([{ text }]))
    const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
    expect(chunks.filter((c) => c.type === 'text').length).toBeGreaterThan(1)
    for (const chunk of chunks.filter((c) => c.type === 'text')) expect((chunk as { text: string }).text).not.toMatch(loneSurrogate)
    expect(textOf(chunks)).toBe(text)
  })

  it('emits reasoning before the text', async () => {
    const chunks = await collect(createScriptedProvider([{ reasoning: 'think', text: 'ok' }]))
    expect(chunks[0]).toEqual({ type: 'reasoning', text: 'think' })
  })

  it('emits complete tool calls with generated ids and a tool-calls finish', async () => {
    const provider = createScriptedProvider([
      { text: 'Reading.', toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }, { id: 'mine', name: 'list_dir' }] },
      { toolCalls: [{ name: 'edit_file', arguments: '{"path": "a.txt",' }] },
    ])
    const first = await collect(provider)
    expect(first.filter((c) => c.type === 'tool-call')).toEqual([
      { type: 'tool-call', call: { id: 'call_1', name: 'read_file', arguments: '{"path":"a.txt"}' } },
      { type: 'tool-call', call: { id: 'mine', name: 'list_dir', arguments: '{}' } },
    ])
    expect(finishOf(first)).toEqual({ type: 'finish', reason: 'tool-calls' })
    const second = await collect(provider)
    // A string is passed through untouched so malformed JSON can be scripted; ids keep counting.
    expect(second).toEqual([
      { type: 'tool-call', call: { id: 'call_2', name: 'edit_file', arguments: '{"path": "a.txt",' } },
      { type: 'finish', reason: 'tool-calls' },
    ])
  })

  it('ends an error step with an error finish carrying code, message and retryAfterMs', async () => {
    const chunks = await collect(createScriptedProvider([
      { kind: 'error', code: 'RATE_LIMIT', message: 'slow down', retryAfterMs: 1500, text: 'partial' },
      { kind: 'error', code: 'SERVER' },
    ]))
    expect(textOf(chunks)).toBe('partial')
    expect(finishOf(chunks)).toEqual({ type: 'finish', reason: 'error', error: { code: 'RATE_LIMIT', message: 'slow down', retryAfterMs: 1500 } })
  })

  it('gives error steps without a message a default one', async () => {
    const provider = createScriptedProvider([{ kind: 'error', code: 'SERVER' }])
    expect(finishOf(await collect(provider))).toEqual({ type: 'finish', reason: 'error', error: { code: 'SERVER', message: 'scripted SERVER error' } })
  })

  it('finishes a max-tokens step with reason max-tokens after its text', async () => {
    const chunks = await collect(createScriptedProvider([{ kind: 'max-tokens', text: 'cut off' }]))
    expect(textOf(chunks)).toBe('cut off')
    expect(finishOf(chunks)).toEqual({ type: 'finish', reason: 'max-tokens' })
  })

  it('responds after a short delay', async () => {
    const chunks = await collect(createScriptedProvider([{ text: 'late', delayMs: 5 }]))
    expect(textOf(chunks)).toBe('late')
    expect(finishOf(chunks)).toEqual({ type: 'finish', reason: 'stop' })
  })
})

describe('scripted provider: aborts', () => {
  const aborted = { type: 'finish', reason: 'error', error: { code: 'ABORTED', message: expect.any(String) } }

  it('ends a long delay promptly when the signal aborts', async () => {
    const provider = createScriptedProvider([{ text: 'never', delayMs: 600_000 }])
    const controller = new AbortController()
    const iterator = provider.stream(request(), controller.signal)[Symbol.asyncIterator]()
    const pending = iterator.next()
    controller.abort()
    expect((await pending).value).toEqual(aborted)
    expect((await iterator.next()).done).toBe(true)
  })

  it('keeps a hang open until the signal aborts, after streaming its text', async () => {
    const provider = createScriptedProvider([{ kind: 'hang', text: 'thinking...' }])
    const controller = new AbortController()
    const chunks: ModelChunk[] = []
    const done = (async () => {
      for await (const chunk of provider.stream(request(), controller.signal)) {
        chunks.push(chunk)
        // Abort only once all text arrived, so the hang itself is what the abort ends.
        if (textOf(chunks) === 'thinking...') setImmediate(() => controller.abort())
      }
    })()
    await done
    expect(textOf(chunks)).toBe('thinking...')
    expect(finishOf(chunks)).toEqual(aborted)
  })

  it('stops streaming text as soon as the signal aborts', async () => {
    const provider = createScriptedProvider([{ text: 'a long answer that is streamed', toolCalls: [{ name: 'x' }] }])
    const controller = new AbortController()
    const chunks: ModelChunk[] = []
    for await (const chunk of provider.stream(request(), controller.signal)) {
      chunks.push(chunk)
      controller.abort()
    }
    expect(chunks).toHaveLength(2)
    expect(chunks[0].type).toBe('text')
    expect(chunks[1]).toEqual(aborted)
  })

  it('answers an already aborted request with the abort finish only', async () => {
    const controller = new AbortController()
    controller.abort()
    const provider = createScriptedProvider([{ text: 'x' }])
    expect(await collect(provider, request(), controller.signal)).toEqual([aborted])
    expect(provider.remaining).toBe(0)
  })

  it('aborts while an async function step is still deciding', async () => {
    const provider = createScriptedProvider([() => new Promise(() => {})])
    const controller = new AbortController()
    const iterator = provider.stream(request(), controller.signal)[Symbol.asyncIterator]()
    const pending = iterator.next()
    controller.abort()
    expect((await pending).value).toEqual(aborted)
  })
})

describe('scripted provider: script management', () => {
  it('fails explicitly when the script is exhausted, saying how many requests were served', async () => {
    const provider = createScriptedProvider([{ text: 'one' }, { text: 'two' }])
    await collect(provider)
    await collect(provider)
    const chunks = await collect(provider)
    expect(chunks).toHaveLength(1)
    const finish = finishOf(chunks) as Extract<ModelChunk, { type: 'finish' }>
    expect(finish.reason).toBe('error')
    expect(finish.error?.code).toBe('INTERNAL')
    expect(finish.error?.message).toMatch(/exhausted/)
    expect(finish.error?.message).toMatch(/served 2 request/)
  })

  it('records copies of every request; a step gets frozen copies, so it cannot change them', async () => {
    const provider = createScriptedProvider([{ text: 'a' }, (req) => {
      ;(req.messages[0] as { content: { text: string }[] }).content[0].text = 'changed by the step'
      return { text: 'b' }
    }])
    const first = request('first')
    await collect(provider, first)
    ;(first.messages[0] as { content: { text: string }[] }).content[0].text = 'mutated later'
    first.tools.length = 0
    const second = await collect(provider, request('second'))
    expect(second.at(-1)).toMatchObject({ type: 'finish', reason: 'error', error: { code: 'INTERNAL', message: expect.stringContaining('threw: Cannot assign to read only property') } })
    expect(provider.requests).toHaveLength(2)
    expect(provider.requests[0]).toEqual(request('first'))
    expect(provider.requests[0]).not.toBe(first)
    expect(provider.requests[1]).toEqual(request('second'))
  })

  it('records the output schema a request asks for, as a frozen copy a step can read', async () => {
    const seen: unknown[] = []
    const provider = createScriptedProvider([(req) => {
      seen.push(req.outputSchema)
      return { text: '{"ok":true}' }
    }])
    const outputSchema = { name: 'verdict', schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } }
    await collect(provider, { ...request('judge'), outputSchema })
    outputSchema.schema.required.push('changed later')
    expect(provider.requests[0].outputSchema).toEqual({ name: 'verdict', schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } })
    expect(seen).toEqual([provider.requests[0].outputSchema])
    expect(Object.isFrozen(provider.requests[0].outputSchema!.schema)).toBe(true)
  })

  it('copies each message of a growing history once: requests share the copies of their common start', async () => {
    const provider = createScriptedProvider(Array.from({ length: 3 }, () => ({ text: 'ok' })))
    const history = request('one')
    await collect(provider, history)
    history.messages.push({ role: 'user', content: [{ type: 'text', text: 'two' }] })
    await collect(provider, { ...history, messages: history.messages.slice() })
    // A history that does not continue the last one (a compaction replaced its start) is copied anew.
    await collect(provider, request('other'))
    const [a, b, c] = provider.requests
    expect(b.messages).toHaveLength(2)
    expect(b.messages[0]).toBe(a.messages[0])
    expect(c.messages[0]).not.toBe(a.messages[0])
    expect(c).toEqual(request('other'))
    expect(Object.isFrozen(b.messages[1])).toBe(true)
  })

  it('runs function steps with the request, sync or async', async () => {
    const provider = createScriptedProvider([
      (req) => ({ text: `echo: ${(req.messages.at(-1) as { content: { text: string }[] }).content[0].text}` }),
      async (req) => ({ toolCalls: [{ name: req.tools[0].name, arguments: { path: 'x' } }] }),
    ])
    expect(textOf(await collect(provider, request('ping')))).toBe('echo: ping')
    const second = await collect(provider)
    expect(second[0]).toMatchObject({ type: 'tool-call', call: { name: 'read_file', arguments: '{"path":"x"}' } })
  })

  it('turns a throwing or invalid function step into an INTERNAL error finish', async () => {
    const provider = createScriptedProvider([
      () => { throw new Error('step bug') },
      () => ({ kind: 'nonsense' }) as never,
    ])
    const thrown = finishOf(await collect(provider)) as Extract<ModelChunk, { type: 'finish' }>
    expect(thrown.error).toMatchObject({ code: 'INTERNAL', message: expect.stringContaining('step bug') })
    const invalid = finishOf(await collect(provider)) as Extract<ModelChunk, { type: 'finish' }>
    expect(invalid.error).toMatchObject({ code: 'INTERNAL', message: expect.stringContaining('unknown kind "nonsense"') })
  })

  it('push adds steps, remaining counts them, reset drops steps and requests', async () => {
    const provider = createScriptedProvider()
    expect(provider.remaining).toBe(0)
    provider.push({ text: 'a' }, { text: 'b' })
    expect(provider.remaining).toBe(2)
    await collect(provider)
    expect(provider.remaining).toBe(1)
    expect(provider.requests).toHaveLength(1)
    provider.reset([{ text: 'c' }])
    expect(provider.remaining).toBe(1)
    expect(provider.requests).toHaveLength(0)
    expect(textOf(await collect(provider))).toBe('c')
    provider.reset()
    expect(provider.remaining).toBe(0)
  })

  it('refuses malformed steps when they are added', () => {
    const provider = createScriptedProvider()
    expect(() => provider.push({ kind: 'eror' } as never)).toThrow(/unknown kind "eror"/)
    expect(() => provider.push({ text: 'x', toolcalls: [] } as never)).toThrow(/unknown key\(s\) "toolcalls"/)
    expect(() => provider.push({ kind: 'error' } as never)).toThrow(/non-empty string "code"/)
    expect(() => provider.push({ toolCalls: [{ arguments: {} }] } as never)).toThrow(/toolCalls\[0\] needs a non-empty string "name"/)
    expect(() => createScriptedProvider([{ delayMs: -1 }])).toThrow(/delayMs/)
    expect(provider.remaining).toBe(0)
  })
})

describe('scripted provider: the script is its own copy', () => {
  it('is not changed by edits to the step objects after they were added', async () => {
    const first = { text: 'original', toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }], usage: { inputTokens: 1, outputTokens: 2 } }
    const pushed = { kind: 'error' as const, code: 'SERVER', message: 'original error' }
    const provider = createScriptedProvider([first])
    provider.push(pushed)
    first.text = 'changed'
    first.toolCalls[0].arguments.path = '/etc/passwd'
    first.usage.inputTokens = 999
    pushed.message = 'changed error'
    ;(pushed as { kind: string }).kind = 'bogus'
    const chunks = await collect(provider)
    expect(textOf(chunks)).toBe('original')
    expect(chunks.filter((c) => c.type !== 'text')).toEqual([
      { type: 'tool-call', call: { id: 'call_1', name: 'read_file', arguments: '{"path":"a.txt"}' } },
      { type: 'usage', usage: { inputTokens: 1, outputTokens: 2 } },
      { type: 'finish', reason: 'tool-calls' },
    ])
    expect(finishOf(await collect(provider))).toEqual({ type: 'finish', reason: 'error', error: { code: 'SERVER', message: 'original error' } })
  })

  it('is not changed through recorded requests or emitted chunks', async () => {
    const step = { text: 'same', usage: { inputTokens: 1, outputTokens: 1 } }
    const provider = createScriptedProvider()
    provider.push(step, step)
    const chunks = await collect(provider)
    ;(chunks.find((c) => c.type === 'usage') as { usage: { inputTokens: number } }).usage.inputTokens = 42
    // Recorded requests are frozen: tampering with one throws and changes nothing.
    expect(() => ((provider.requests[0].messages[0] as { content: { text: string }[] }).content[0].text = 'tampered')).toThrow(TypeError)
    provider.requests[0].tools.length = 0
    const again = await collect(provider)
    expect(again).toEqual(chunks.map((c) => (c.type === 'usage' ? { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } } : c)))
    expect(provider.requests[1]).toEqual(request())
  })

  it('stays explicit about exhaustion after being refilled and drained again', async () => {
    const provider = createScriptedProvider([{ text: 'one' }])
    await collect(provider)
    expect(finishOf(await collect(provider))).toMatchObject({ error: { code: 'INTERNAL', message: expect.stringMatching(/exhausted; it served 1 request\(s\) and has no step for request #2/) } })
    provider.push({ text: 'three' })
    expect(textOf(await collect(provider))).toBe('three')
    expect(finishOf(await collect(provider))).toMatchObject({ error: { code: 'INTERNAL', message: expect.stringMatching(/no step for request #4/) } })
    expect(provider.remaining).toBe(0)
  })
})
