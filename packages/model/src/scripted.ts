import { deepFreeze, delay, describeError, nextMacrotask } from '@goalkeeper/kit'
import type { ModelChunk, ModelRequest, ScriptResponse, ScriptStep, ScriptToolCall, ScriptedOptions, ScriptedProvider } from './types.ts'
import { checkResponse, checkSteps } from './script.ts'
import { untilAbort } from './abort.ts'

/** The code of the `finish` error emitted when the request's signal aborts; the agent loop handles aborts itself. */
export const ABORTED_CODE = 'ABORTED'

const aborted: ModelChunk = { type: 'finish', reason: 'error', error: { code: ABORTED_CODE, message: 'the model request was aborted' } }

const internal = (message: string): ModelChunk => ({ type: 'finish', reason: 'error', error: { code: 'INTERNAL', message } })

function clone<T>(value: T): T {
  try {
    return structuredClone(value)
  } catch {
    return JSON.parse(JSON.stringify(value)) as T
  }
}

/** Splits text into up to three pieces on code-point boundaries, so consumers see real streaming. */
export function splitText(text: string): string[] {
  const chars = Array.from(text)
  if (chars.length <= 1) return text ? [text] : []
  const size = Math.ceil(chars.length / 3)
  const pieces: string[] = []
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''))
  return pieces
}

/** Copies data steps before checking them, so the caller's objects can change later without changing (or invalidating) the script. */
const ownSteps = (steps: readonly ScriptStep[], where: string): ScriptStep[] =>
  checkSteps(steps.map((step) => (typeof step === 'function' ? step : clone(step))), where)

/**
 * A provider that replays a script, one step per request. It never invents a default reply:
 * when the script runs out it finishes with an explicit INTERNAL error.
 */
export function createScriptedProvider(initial: readonly ScriptStep[] = [], options: ScriptedOptions = {}): ScriptedProvider {
  let window = checkWindow(options.contextWindow)
  const steps: ScriptStep[] = ownSteps(initial, 'scripted script')
  const requests: ModelRequest[] = []
  const recorder = new RequestRecorder()
  let served = 0
  // Never reset, so generated call ids stay unique for the provider's lifetime (sessions outlive a reset).
  let calls = 0
  const nextCallId = () => `call_${++calls}`

  async function* respond(step: ScriptStep | undefined, number: number, request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelChunk> {
    if (step === undefined) {
      yield internal(`scripted provider: the script is exhausted; it served ${number - 1} request(s) and has no step for request #${number}. Add steps to the script (or push them) for every model call the run makes.`)
      return
    }
    let response: ScriptResponse
    if (typeof step === 'function') {
      let outcome: { value: ScriptResponse } | undefined
      try {
        outcome = await untilAbort(Promise.resolve(step(request)), signal)
      } catch (error) {
        yield internal(`scripted provider: script step for request #${number} threw: ${describeError(error)}`)
        return
      }
      if (!outcome) return yield aborted
      const problem = checkResponse(outcome.value)
      if (problem) {
        yield internal(`scripted provider: script step for request #${number} returned an invalid response: ${problem}`)
        return
      }
      response = outcome.value
    } else {
      response = step
    }
    if (signal.aborted) return yield aborted
    if ('delayMs' in response && response.delayMs && !(await delay(response.delayMs, { signal }))) return yield aborted

    if ((!response.kind || response.kind === 'reply') && response.reasoning) {
      yield { type: 'reasoning', text: response.reasoning }
    }
    for (const text of splitText(response.text ?? '')) {
      if (signal.aborted) return yield aborted
      yield { type: 'text', text }
      await nextMacrotask()
    }
    if (signal.aborted) return yield aborted

    switch (response.kind) {
      case 'hang':
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))
        return yield aborted
      case 'max-tokens':
        return yield { type: 'finish', reason: 'max-tokens' }
      case 'error':
        return yield {
          type: 'finish',
          reason: 'error',
          error: {
            code: response.code,
            message: response.message ?? `scripted ${response.code} error`,
            ...(response.retryAfterMs !== undefined ? { retryAfterMs: response.retryAfterMs } : {}),
          },
        }
      default: {
        const toolCalls = response.toolCalls ?? []
        for (const call of toolCalls) yield { type: 'tool-call', call: toCall(call) }
        if (response.usage) yield { type: 'usage', usage: response.usage }
        return yield { type: 'finish', reason: toolCalls.length ? 'tool-calls' : 'stop' }
      }
    }
  }

  function toCall(call: ScriptToolCall) {
    const args = call.arguments === undefined ? '{}' : typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments)
    return { id: call.id ?? nextCallId(), name: call.name, arguments: args }
  }

  return {
    get requests() {
      return requests
    },
    get remaining() {
      return steps.length
    },
    push(...more) {
      steps.push(...ownSteps(more, 'scripted push'))
    },
    reset(next = []) {
      const checked = ownSteps(next, 'scripted reset')
      steps.length = 0
      requests.length = 0
      recorder.clear()
      served = 0
      steps.push(...checked)
    },
    contextWindow: () => window,
    setContextWindow(tokens) {
      window = checkWindow(tokens)
    },
    describe: () => ({ summary: 'scripted answers replayed in-process (offline)', offline: true }),
    // Not an async generator itself: the request is recorded and its step taken at call time, in call order.
    stream(request, signal) {
      requests.push(recorder.record(request))
      const number = ++served
      return respond(steps.shift(), number, recorder.record(request), signal)
    },
  }
}

/**
 * Copies of requests that cost O(1) per call over a long run. A copy keeps the provider's records and its
 * script apart from the agent's own objects (a script that edits a message must not change the agent's
 * history), but copying the whole history on every call made a run of n calls O(n^2) in time and memory.
 * History only grows between calls (a compaction replaces its start), so each message is copied once, when
 * first seen (and frozen, as they are shared), and every request's messages are a prefix of one shared array
 * of those copies, read on demand.
 */
class RequestRecorder {
  private copies = new WeakMap<object, unknown>()
  private log: ModelRequest['messages'] = []

  record(request: ModelRequest): ModelRequest {
    const messages = request.messages
    if (!this.extends(messages)) this.log = []
    for (let index = this.log.length; index < messages.length; index++) this.log.push(this.copy(messages[index]))
    const log = this.log
    const length = messages.length
    const { messages: _, ...rest } = request
    const copy = { ...rest, tools: request.tools.map((tool) => this.copy(tool)) } as ModelRequest
    if (rest.outputSchema) copy.outputSchema = this.copy(rest.outputSchema)
    // A fresh array on each read: a script may sort or splice what it is given.
    Object.defineProperty(copy, 'messages', { enumerable: true, get: () => log.slice(0, length) })
    return copy
  }

  clear(): void {
    this.log = []
  }

  /** Whether `messages` starts with every message already in the log (the same objects, or ones copied from them). */
  private extends(messages: ModelRequest['messages']): boolean {
    if (messages.length < this.log.length) return false
    for (let index = 0; index < this.log.length; index++) if (this.copies.get(messages[index]) !== this.log[index]) return false
    return true
  }

  private copy<T>(value: T): T {
    if (!value || typeof value !== 'object') return value
    let copy = this.copies.get(value) as T | undefined
    if (copy === undefined) {
      // Frozen: the copies are shared by every recorded request and every step, so none may change them.
      copy = deepFreeze(clone(value))
      this.copies.set(value, copy)
    }
    return copy
  }
}

function checkWindow(tokens: number | undefined): number | undefined {
  if (tokens === undefined) return undefined
  if (!Number.isInteger(tokens) || tokens < 1) throw new TypeError(`scripted contextWindow must be a positive integer, got ${JSON.stringify(tokens)}`)
  return tokens
}
