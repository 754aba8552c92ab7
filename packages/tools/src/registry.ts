import { Context, Service } from 'cordis'
import type { ToolCall, ToolSchema } from '@goalkeeper/model'
import { deepFreeze, describeError, dispatchIsolated } from '@goalkeeper/kit'
import type { Entry, ToolCallContext, ToolCallReport, ToolDefinition, ToolResult, ToolService } from './types.ts'
import { checkSchema, createCompiler, type Compiler } from './schema.ts'
import { runCall, type CallOutcome } from './pipeline.ts'
import { reviewCall } from './review.ts'
import { capResult, failure } from './result.ts'
import { checkKind } from './kind.ts'

export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/

/**
 * The `ctx.tools` service. As a Cordis `Service`, `this.ctx` inside `register` is the caller's
 * context, so a tool is an effect of the plugin that registered it. Plain fields, not `#private`,
 * because methods run with a proxied `this`.
 */
export class ToolRegistry extends Service implements ToolService {
  entries = new Map<string, Entry>()
  compiler: Compiler = createCompiler()

  constructor(ctx: Context, public limits: { maxContentChars: number; maxArgumentChars: number }) {
    super(ctx, 'tools')
  }

  register<A = any>(tool: ToolDefinition<A>): () => void {
    const entry = this.compile(tool as ToolDefinition)
    const { name } = entry.tool
    const dispose = this.ctx.effect(() => {
      this.assertFree(name)
      this.entries.set(name, entry)
      return () => {
        if (this.entries.get(name) !== entry) return
        this.entries.delete(name)
        this.compiler.removeSchema(entry.parameters)
      }
    }, `tools.register(${JSON.stringify(name)})`)
    return () => void dispose()
  }

  get(name: string): ToolDefinition | undefined {
    return this.entries.get(name)?.tool
  }

  list(): ToolDefinition[] {
    return [...this.entries.values()].map((entry) => entry.tool)
  }

  schemas(names?: readonly string[]): ToolSchema[] {
    const entries = names ? names.map((name) => this.entries.get(name)).filter((e): e is Entry => !!e) : [...this.entries.values()]
    // Every model call asks for the schemas: hand out the frozen copy made at registration, not a new deep copy.
    return entries.map(({ tool, advertised }) => ({ name: tool.name, description: tool.description, parameters: advertised }))
  }

  async execute(call: ToolCall, context: Omit<ToolCallContext, 'callId'>): Promise<ToolResult> {
    const outcome = await this.run(call, context)
    const result = capResult(outcome.result, this.limits.maxContentChars)
    const report: ToolCallReport = {
      name: typeof call?.name === 'string' ? call.name : '',
      call: { ...context, callId: call?.id },
      ...(outcome.args ? { arguments: outcome.args } : {}),
      result,
    }
    dispatchIsolated(this.ctx, 'tool/after-call', report)
    return result
  }

  async run(call: ToolCall, context: Omit<ToolCallContext, 'callId'>): Promise<CallOutcome> {
    const entry = this.entries.get(call?.name)
    if (!entry) {
      const available = [...this.entries.keys()]
      const which = call?.name ? `Unknown tool "${call.name}".` : 'The tool call has no name.'
      return { result: failure('UNKNOWN_TOOL', `${which} Available tools: ${available.length ? available.join(', ') : '(none)'}.`) }
    }
    const logger = this.ctx.logger('tools')
    const { maxArgumentChars } = this.limits
    try {
      return await runCall(entry, call, context, maxArgumentChars, (...args) => reviewCall(this.ctx, logger, maxArgumentChars, ...args))
    } catch (error) {
      // runCall is written not to throw; this keeps the "never throws" promise if it ever does.
      logger.warn('pipeline error in %s: %s', call.name, error)
      return { result: failure('TOOL_FAILED', `Tool "${call.name}" could not be run: ${describeError(error)}`) }
    }
  }

  compile(tool: ToolDefinition): Entry {
    if (!tool || typeof tool !== 'object') throw new TypeError('a tool must be an object { name, description, parameters, execute }')
    const { name, description, parameters, execute } = tool
    if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
      throw new TypeError(`invalid tool name ${JSON.stringify(name)}: it must match ${TOOL_NAME} (letters, digits, _ and -, at most 64)`)
    }
    if (typeof description !== 'string' || !description.trim()) throw new TypeError(`tool "${name}" needs a non-empty description`)
    if (typeof execute !== 'function') throw new TypeError(`tool "${name}" needs an execute(args, call) function`)
    checkKind(name, tool.kind)
    if (tool.readOnly !== undefined && typeof tool.readOnly !== 'boolean') throw new TypeError(`tool "${name}": readOnly must be true or false`)
    for (const describer of ['title', 'locations', 'diff'] as const) {
      if (tool[describer] !== undefined && typeof tool[describer] !== 'function') throw new TypeError(`tool "${name}": ${describer} must be a function`)
    }
    if (!parameters || typeof parameters !== 'object' || Array.isArray(parameters) || parameters.type !== 'object') {
      throw new TypeError(`tool "${name}": parameters must be a JSON Schema with type "object"`)
    }
    this.assertFree(name)
    // A private copy: later edits by the caller cannot desynchronise the validator from the advertised schema.
    const schema = structuredClone(parameters)
    try {
      checkSchema(schema)
      return { tool, parameters: schema, advertised: deepFreeze(structuredClone(schema)), validate: this.compiler.compile(schema) }
    } catch (error) {
      throw new TypeError(`tool "${name}": invalid parameters schema: ${(error as Error).message}`)
    }
  }

  assertFree(name: string) {
    if (this.entries.has(name)) {
      throw new Error(`tool "${name}" is already registered; unload the plugin that registered it or pick another name`)
    }
  }
}
