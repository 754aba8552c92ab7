// Frames in the public formats of OpenAI, DeepSeek, vLLM and Ollama, served by the local streaming server:
// a refusal, error objects inside the stream, usage-only final chunks and reasoning_content.
import { describe, expect, it } from 'vitest'
import { delta, frame, runOnce, sse, TEST_KEY, useServers } from './fake-server.ts'

const serve = useServers()
const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => frame({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1764540000, model: 'm', choices, ...extra })

describe('provider edge cases in public stream formats', () => {
  it('OpenAI refusal: the answer says the model refused and why, and the finish is REFUSED', async () => {
    const { chunks, finish } = await runOnce(serve, [sse(
      chunk([{ index: 0, delta: { role: 'assistant', content: null, refusal: '' }, logprobs: null, finish_reason: null }]),
      chunk([{ index: 0, delta: { refusal: "I'm sorry, I can't help " }, logprobs: null, finish_reason: null }]),
      chunk([{ index: 0, delta: { refusal: 'with that request.' }, logprobs: null, finish_reason: null }]),
      chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]),
      chunk([], { usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 } }),
      frame('[DONE]'),
    )])
    const text = chunks.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('')
    expect(text).toBe("The model refused to answer: I'm sorry, I can't help with that request.")
    expect(chunks.find((c) => c.type === 'usage')).toEqual({ type: 'usage', usage: { inputTokens: 20, outputTokens: 9 } })
    expect(finish).toEqual({ type: 'finish', reason: 'error', error: { code: 'REFUSED', message: "openai-compatible: the model refused: I'm sorry, I can't help with that request." } })
  })

  it.for([
    // OpenAI-compatible proxies report a bad key inside a 200 stream; the key quoted back is masked.
    [{ error: { message: `Incorrect API key provided: ${TEST_KEY}. You can find your API key at https://platform.openai.com/account/api-keys.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }, 'AUTH'],
    // vLLM's error object carries the HTTP status as `code`.
    [{ error: { object: 'error', message: 'Too many requests, please slow down', type: 'TooManyRequestsError', param: null, code: 429 } }, 'RATE_LIMIT'],
    [{ error: { object: 'error', message: "This model's maximum context length is 8192 tokens.", type: 'BadRequestError', param: null, code: 400 } }, 'CONTEXT_OVERFLOW'],
    [{ error: { message: 'Insufficient Balance', type: 'unknown_error', code: 'invalid_request_error' } }, 'QUOTA'],
    [{ error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } }, 'RATE_LIMIT'],
    [{ error: 'model "llama3" not found, try pulling it first', status: 404 }, 'BAD_REQUEST'],
  ] as const)('an error object inside the stream is classified by its content: %j -> %s', async ([body, code]) => {
    const { finish, received } = await runOnce(serve, [sse(delta({ role: 'assistant', content: '' }), frame(body), frame('[DONE]'))], { maxRetries: 0 })
    expect(finish.error.code).toBe(code)
    expect(finish.error.message).not.toContain(TEST_KEY)
    expect(received).toHaveLength(1)
  })

  it('DeepSeek: reasoning_content apart from the answer, and the usage-only final chunk with cache hits', async () => {
    const { chunks, finish } = await runOnce(serve, [sse(
      chunk([{ index: 0, delta: { role: 'assistant', content: null, reasoning_content: '' }, logprobs: null, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: null, reasoning_content: 'The user greets; ' }, logprobs: null, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: null, reasoning_content: 'answer briefly.' }, logprobs: null, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: 'Hello!', reasoning_content: null }, logprobs: null, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: '', reasoning_content: null }, logprobs: null, finish_reason: 'stop' }], {
        usage: { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 25 }, prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: 12 },
      }),
      frame('[DONE]'),
    )])
    expect(chunks.filter((c) => c.type === 'reasoning').map((c) => (c as { text: string }).text).join('')).toBe('The user greets; answer briefly.')
    expect(chunks.filter((c) => c.type === 'text').map((c) => (c as { text: string }).text).join('')).toBe('Hello!')
    expect(chunks.find((c) => c.type === 'usage')).toEqual({ type: 'usage', usage: { inputTokens: 12, outputTokens: 30, cachedInputTokens: 0, reasoningTokens: 25 } })
    expect(finish).toEqual({ type: 'finish', reason: 'stop' })
  })

  it('vLLM and Ollama: usage in a final chunk with empty choices, after the finish reason', async () => {
    const { chunks, finish } = await runOnce(serve, [sse(
      chunk([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]),
      chunk([{ index: 0, delta: { reasoning: 'short thought' }, logprobs: null, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: 'ok' }, logprobs: null, finish_reason: null }]),
      chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop', stop_reason: null }]),
      chunk([], { usage: { prompt_tokens: 7, total_tokens: 9, completion_tokens: 2, prompt_tokens_details: null } }),
      frame('[DONE]'),
    )])
    expect(chunks.filter((c) => c.type !== 'finish')).toEqual([
      { type: 'reasoning', text: 'short thought' },
      { type: 'text', text: 'ok' },
      { type: 'usage', usage: { inputTokens: 7, outputTokens: 2 } },
    ])
    expect(finish).toEqual({ type: 'finish', reason: 'stop' })
  })
})
