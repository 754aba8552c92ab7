import { dispatchIsolated } from '@goalkeeper/kit'
import type { ModelRequest } from '@goalkeeper/model'
import type { AgentCore } from './state.ts'
import type { History, HistorySnapshot } from './history.ts'
import { composeSystemPrompt } from './prompt.ts'

/** The history each request built here holds, for its estimate without a walk over its messages. */
const snapshots = new WeakMap<ModelRequest, HistorySnapshot>()

/** The request for the next model call, derived from the session log so a resumed agent continues the same conversation. */
export function buildRequest(agent: AgentCore): ModelRequest {
  const { ctx, config, tools } = agent.host
  const sections: string[] = []
  // Listeners push synchronously; copy right away so a late (async) push cannot change a request in flight.
  dispatchIsolated(ctx, 'agent/system-prompt', agent, sections)
  const pushed = sections.filter((section) => typeof section === 'string')
  const request: Omit<ModelRequest, 'messages'> = {
    system: composeSystemPrompt(config.system, agent.session.header.cwd, agent.settings.system, pushed),
    tools: tools.schemas(agent.settings.tools),
  }
  if (agent.settings.modelId) request.model = agent.settings.modelId
  const maxTokens = agent.settings.maxTokens ?? config.maxTokens
  if (maxTokens) request.maxTokens = maxTokens
  if (agent.settings.outputSchema) request.outputSchema = agent.settings.outputSchema
  return withHistory(request, agent.history.snapshot())
}

/**
 * `request` (its messages left out) with the history as it is now. The messages are copied when first read,
 * not here: a step whose request is checked against the window and handed to a provider copies a long
 * history once, where the provider reads it, or never; a caller that keeps the request still reads the
 * history it was sent with. From the first read or assignment on, `messages` is a plain array property.
 */
export function withHistory(request: ModelRequest | Omit<ModelRequest, 'messages'>, snapshot: HistorySnapshot): ModelRequest {
  // Descriptors, not a spread: a spread would read (and copy) the messages being replaced.
  const descriptors: PropertyDescriptorMap = Object.getOwnPropertyDescriptors(request)
  delete descriptors.messages
  const next = Object.defineProperties({}, descriptors) as ModelRequest
  const settle = (value: ModelRequest['messages']) => {
    // Whoever holds the array may change it: the kept estimate no longer speaks for it.
    snapshots.delete(next)
    Object.defineProperty(next, 'messages', { value, enumerable: true, configurable: true, writable: true })
    return value
  }
  Object.defineProperty(next, 'messages', {
    enumerable: true,
    configurable: true,
    get: () => settle(snapshot.messages()),
    set: settle,
  })
  snapshots.set(next, snapshot)
  return next
}

/** Estimated tokens of `request`'s messages: the history's kept figure while they were not read, counted otherwise. */
export const messagesEstimate = (request: ModelRequest, history: History): number =>
  snapshots.get(request)?.tokens ?? history.estimate(request.messages)
