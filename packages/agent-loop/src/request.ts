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
  return withHistory(request, agent.history.snapshot())
}

/**
 * `request` (its messages left out) with the history as it is now. The messages are copied when read, not
 * here: a long history is not copied at every step for a provider that reads it once, and a caller that
 * keeps the request still reads the history it was sent with. Assigning `messages` replaces them as usual.
 */
export function withHistory(request: ModelRequest | Omit<ModelRequest, 'messages'>, snapshot: HistorySnapshot): ModelRequest {
  // Descriptors, not a spread: a spread would read (and copy) the messages being replaced.
  const descriptors: PropertyDescriptorMap = Object.getOwnPropertyDescriptors(request)
  delete descriptors.messages
  const next = Object.defineProperties({}, descriptors) as ModelRequest
  Object.defineProperty(next, 'messages', {
    enumerable: true,
    configurable: true,
    get: snapshot.messages,
    set(value: ModelRequest['messages']) {
      snapshots.delete(next)
      Object.defineProperty(next, 'messages', { value, enumerable: true, configurable: true, writable: true })
    },
  })
  snapshots.set(next, snapshot)
  return next
}

/** Estimated tokens of `request`'s messages: kept by the history for requests built here, counted otherwise. */
export const messagesEstimate = (request: ModelRequest, history: History): number =>
  snapshots.get(request)?.tokens ?? history.estimate(request.messages)
