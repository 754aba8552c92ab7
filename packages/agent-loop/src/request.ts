import { dispatchIsolated } from '@goalkeeper/kit'
import type { ModelRequest } from '@goalkeeper/model'
import type { AgentCore } from './state.ts'
import { composeSystemPrompt } from './prompt.ts'

/** The request for the next model call, derived from the session log so a resumed agent continues the same conversation. */
export function buildRequest(agent: AgentCore): ModelRequest {
  const { ctx, config, tools } = agent.host
  const sections: string[] = []
  // Listeners push synchronously; copy right away so a late (async) push cannot change a request in flight.
  dispatchIsolated(ctx, 'agent/system-prompt', agent, sections)
  const pushed = sections.filter((section) => typeof section === 'string')
  const request: ModelRequest = {
    system: composeSystemPrompt(config.system, agent.session.header.cwd, agent.settings.system, pushed),
    messages: agent.history.current(),
    tools: tools.schemas(agent.settings.tools),
  }
  if (agent.settings.modelId) request.model = agent.settings.modelId
  const maxTokens = agent.settings.maxTokens ?? config.maxTokens
  if (maxTokens) request.maxTokens = maxTokens
  return request
}
