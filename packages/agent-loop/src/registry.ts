import { describeError, dispatchIsolated } from '@goalkeeper/kit'
import type { Session } from '@goalkeeper/session'
import type { Agent, AgentService, CreateAgentOptions } from './types.ts'
import type { AgentSettings, LoopHost } from './state.ts'
import { LoopAgent } from './agent.ts'
import { AgentLoopError } from './errors.ts'
import { foldSession } from './fold.ts'
import { OUTPUT_SCHEMA_NAME, type OutputSchema } from '@goalkeeper/model'

type StartOptions = Omit<CreateAgentOptions, 'session' | 'cwd'>

/** `ctx.agents`: the agents of one plugin instance. */
export class AgentRegistry implements AgentService {
  private agents = new Map<string, LoopAgent>()
  private closing = false

  constructor(private host: Omit<LoopHost, 'forget'>) {}

  async create(options: CreateAgentOptions = {}): Promise<Agent> {
    const { model, settings } = this.prepare(options, !options.session)
    let session = options.session
    if (session) {
      if (session.readOnly || session.closed) {
        throw new AgentLoopError('SESSION_NOT_WRITABLE', `session ${session.id} is ${session.closed ? 'closed' : 'read-only'}`)
      }
      this.assertFree(session.id)
    } else {
      session = await this.host.sessions.create({ cwd: options.cwd ?? process.cwd() })
    }
    return this.start(session, model, settings, 'new')
  }

  get(id: string) { return this.agents.get(id) }
  /** The checkpoint part of the agent running on session `id`, if one does. */
  checkpointPart(id: string) { return this.agents.get(id)?.checkpointPart() }
  list(): Agent[] { return [...this.agents.values()] }
  defaultModel(): string | undefined { return this.host.models.pick(this.host.config.model) }

  async resume(sessionId: string, options: StartOptions = {}): Promise<Agent> {
    const { model, settings } = this.prepare(options, true)
    this.assertFree(sessionId)
    return this.start(await this.host.sessions.open(sessionId), model, settings, 'resume')
  }

  async fork(sessionId: string, uptoSeq: number, options: StartOptions = {}): Promise<Agent> {
    const { model, settings } = this.prepare(options, true)
    return this.start(await this.host.sessions.fork(sessionId, { uptoSeq }), model, settings, 'fork')
  }

  /** Disposes every agent (ending open turns `disposed`) and waits until each is quiet. */
  async close() {
    this.closing = true
    await Promise.all([...this.agents.values()].map((agent) => agent.dispose()))
  }

  private prepare(options: StartOptions, ownsSession: boolean): { model: string; settings: AgentSettings } {
    if (this.closing) throw new AgentLoopError('SERVICE_CLOSING', 'the agent service is shutting down')
    if (!options || typeof options !== 'object') throw new AgentLoopError('INVALID_OPTIONS', 'agent options must be an object')
    const { config, models } = this.host
    const model = options.model ?? models.pick(config.model)
    if (typeof model !== 'string' || !model) {
      throw new AgentLoopError('NO_MODEL', `no model provider is registered (looked for ${config.model.join(', ') || 'nothing'}); load a model provider plugin or pass \`model\``)
    }
    const maxSteps = options.maxSteps ?? config.maxSteps
    if (!Number.isInteger(maxSteps) || maxSteps < 1) throw new AgentLoopError('INVALID_OPTIONS', `maxSteps must be a positive integer, got ${maxSteps}`)
    if (options.maxTokens !== undefined && (!Number.isInteger(options.maxTokens) || options.maxTokens < 1)) {
      throw new AgentLoopError('INVALID_OPTIONS', `maxTokens must be a positive integer, got ${options.maxTokens}`)
    }
    if (options.tools !== undefined && (!Array.isArray(options.tools) || options.tools.some((name) => typeof name !== 'string'))) {
      throw new AgentLoopError('INVALID_OPTIONS', 'tools must be an array of tool names')
    }
    const settings: AgentSettings = { maxSteps, ownsSession }
    if (options.outputSchema !== undefined) settings.outputSchema = checkOutputSchema(options.outputSchema)
    if (options.system !== undefined) settings.system = String(options.system)
    if (options.tools) settings.tools = [...options.tools]
    if (options.maxTokens !== undefined) settings.maxTokens = options.maxTokens
    if (options.modelId !== undefined) settings.modelId = String(options.modelId)
    return { model, settings }
  }

  private assertFree(id: string) {
    if (this.agents.has(id)) throw new AgentLoopError('AGENT_EXISTS', `an agent already runs on session ${id}`)
  }

  /**
   * Registers an agent on an open session. A resumed or forked session restores its human inputs to the
   * inbox (without waking); other queued inputs died with the process that owned them.
   */
  private start(session: Session, model: string, settings: AgentSettings, source: 'new' | 'resume' | 'fork') {
    try {
      if (this.closing) throw new AgentLoopError('SERVICE_CLOSING', 'the agent service is shutting down')
      this.assertFree(session.id)
    } catch (error) {
      if (settings.ownsSession) this.host.sessions.close(session).catch((e) => this.host.logger.warn('closing session %s failed: %s', session.id, describeError(e)))
      throw error
    }
    const fold = foldSession(session.records)
    const restored = []
    if (source !== 'new') {
      for (const message of fold.pending) {
        if (message.source?.kind === 'human') restored.push(message)
        else session.append('input/cancelled', { messageId: message.id, reason: 'interrupted' })
      }
    }
    const agent = new LoopAgent({ ...this.host, forget: (id) => this.forget(id, agent) }, session, model, settings, fold, restored)
    this.agents.set(agent.id, agent)
    dispatchIsolated(this.host.ctx, 'agent/created', agent)
    dispatchIsolated(this.host.ctx, 'agent/session-start', agent, source)
    return agent
  }

  private forget(id: string, agent: LoopAgent) {
    if (this.agents.get(id) === agent) this.agents.delete(id)
  }
}

/** A copy of `output`, so a caller changing its object later cannot change what the agent's requests ask. */
function checkOutputSchema(output: OutputSchema): OutputSchema {
  if (!output || typeof output !== 'object' || typeof output.name !== 'string' || !OUTPUT_SCHEMA_NAME.test(output.name)) {
    throw new AgentLoopError('INVALID_OPTIONS', `outputSchema.name must match ${OUTPUT_SCHEMA_NAME}, got ${JSON.stringify(output?.name)}`)
  }
  if (!output.schema || typeof output.schema !== 'object' || Array.isArray(output.schema)) {
    throw new AgentLoopError('INVALID_OPTIONS', 'outputSchema.schema must be a JSON Schema object')
  }
  return structuredClone({ name: output.name, schema: output.schema })
}
