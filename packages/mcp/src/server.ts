import { Client, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client'
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio'
import type { Context } from 'cordis'
import { delay, describeError } from '@goalkeeper/kit'
import type { ToolDefinition, ToolResult } from '@goalkeeper/tools'
import { checkConfig, type McpConfig } from './config.ts'
import { inputSchema, toToolResult } from './results.ts'
import { mcpKind, type McpToolAnnotations } from './kind.ts'
import { LineStdioTransport } from './stdio.ts'

/** The OpenAI-compatible tool name limit the registry enforces. */
const MAX_TOOL_NAME = 64
/** The longest stderr line logged; the rest of a longer line is dropped. */
const MAX_STDERR_LINE = 4096
/** Stderr lines logged per second at most; the others are counted and the count logged. */
const STDERR_LINES_PER_SECOND = 50
/** Listing pages read at most: a server paging forever must not stall the connection. */
const MAX_LIST_PAGES = 100
/** How many left-out tools a warning names. */
const NAMED = 10

interface ListedTool { name: string; description?: string; inputSchema?: unknown; annotations?: McpToolAnnotations }

const failure = (code: string, message: string): ToolResult => ({ ok: false, content: message, error: { code, message } })

/**
 * One MCP server: the connection, its tools in `ctx.tools` as `name__tool`, reconnection with backoff
 * after the connection is lost, and the end of it all (`close`): no reconnecting, the connection closed,
 * a stdio server's process ended.
 */
export class McpServer {
  private client: Client | undefined
  private transport: Transport | undefined
  private closed = false
  /** Registered tools by their server name, with the listing they were made from (to keep them across reconnects). */
  private registered = new Map<string, { listing: string; dispose: () => void }>()
  private reconnecting: Promise<void> | undefined
  private stopWaiting = new AbortController()
  private readonly kind: 'stdio' | 'http'
  private readonly logger

  constructor(private ctx: Context, private config: McpConfig) {
    this.kind = checkConfig(config)
    this.logger = ctx.logger('mcp')
  }

  /** The process id of a stdio server while it runs. */
  get pid(): number | undefined {
    return this.transport instanceof LineStdioTransport ? this.transport.pid : undefined
  }

  get connected(): boolean {
    return this.client !== undefined
  }

  /** The first connection: a server that cannot start fails the plugin's load, named by the loader. */
  async start(): Promise<void> {
    await this.connect()
  }

  async close(): Promise<void> {
    this.closed = true
    this.stopWaiting.abort()
    const client = this.client
    this.client = undefined
    // Closing the client closes the transport; for stdio that ends the server process (TERM, then KILL).
    await client?.close().catch((error) => this.logger.warn('[%s] closing: %s', this.config.name, describeError(error)))
  }

  private async connect(): Promise<void> {
    const transport = this.createTransport()
    const client = new Client({ name: 'goalkeeper', version: '0.1.0' })
    // Either side ending the connection: lost (reconnect) unless we are closing.
    client.onclose = () => {
      if (this.client === client) this.lost('the connection closed')
    }
    client.onerror = (error) => this.logger.debug('[%s] transport error: %s', this.config.name, describeError(error))
    this.transport = transport
    try {
      await client.connect(transport, { timeout: this.config.connectTimeoutMs })
      const tools = await this.listTools(client)
      if (this.closed) throw new Error('closed while connecting')
      this.client = client
      this.sync(tools)
      this.logger.info('[%s] connected (%s), %d tools', this.config.name, this.pid ? `stdio, pid ${this.pid}` : this.kind, this.registered.size)
      this.ctx.emit('mcp/connected', this.config.name, [...this.registered.keys()])
    } catch (error) {
      await client.close().catch(() => {})
      throw new Error(`mcp server "${this.config.name}": cannot connect: ${describeError(error)}`)
    }
  }

  private createTransport(): Transport {
    if (this.kind === 'http') {
      return new StreamableHTTPClientTransport(new URL(this.config.url!), { requestInit: { headers: this.config.headers } })
    }
    const { name } = this.config
    return new LineStdioTransport({
      command: this.config.command!,
      args: this.config.args,
      // Only the SDK's small default set (PATH, HOME, ...) and what the entry names: the host's keys stay here.
      env: { ...getDefaultEnvironment(), ...this.config.env },
      cwd: this.config.cwd,
      maxMessageBytes: this.config.maxMessageBytes,
      maxResultChars: this.config.maxResultChars,
      maxStderrLine: MAX_STDERR_LINE,
      onStderr: this.stderrLogger(),
      onOversized: (bytes, id) =>
        this.logger.warn('[%s] a message of %d bytes is over maxMessageBytes (%d): %s', name, bytes, this.config.maxMessageBytes, id === undefined ? 'dropped' : 'its result is cut'),
    })
  }

  /** Logs a server's stderr line by line, at most STDERR_LINES_PER_SECOND, so a flood cannot flood the log. */
  private stderrLogger() {
    const { name } = this.config
    let windowStart = 0
    let logged = 0
    let skipped = 0
    return (line: string, cut: boolean) => {
      if (!line.trim()) return
      const now = Date.now()
      if (now - windowStart >= 1000) {
        if (skipped) this.logger.info('[%s] (%d stderr lines not logged)', name, skipped)
        windowStart = now
        logged = skipped = 0
      }
      if (++logged > STDERR_LINES_PER_SECOND) return void skipped++
      this.logger.info('[%s] %s%s', name, line, cut ? ` … (a line over ${MAX_STDERR_LINE} bytes: the rest of it is not logged)` : '')
    }
  }

  private async listTools(client: Client): Promise<ListedTool[]> {
    const tools: ListedTool[] = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.config.timeoutMs })
      tools.push(...(page.tools as ListedTool[]))
      cursor = page.nextCursor
      if (cursor && ++pages >= MAX_LIST_PAGES) {
        this.logger.warn('[%s] the tool listing goes on past %d pages; the rest is not read', this.config.name, MAX_LIST_PAGES)
        break
      }
    } while (cursor)
    const wanted = this.config.tools
    return this.capped(wanted.length ? tools.filter((tool) => wanted.includes(tool.name)) : tools)
  }

  /**
   * At most `maxTools` of the server's tools, and none past `maxTotalTools` in the registry (the ones this
   * server already has there count as room): a server offering thousands of tools would make every model
   * request too large for a provider to accept. A warning names what was left out.
   */
  private capped(tools: ListedTool[]): ListedTool[] {
    const { name, maxTools, maxTotalTools } = this.config
    const others = this.ctx.tools.list().length - this.registered.size
    const room = Math.max(0, Math.min(maxTools, maxTotalTools - others))
    if (tools.length <= room) return tools
    const left = tools.slice(room).map((tool) => tool.name)
    const why = room < maxTools ? `the registry holds ${others} other tools of at most ${maxTotalTools} (maxTotalTools)` : `over maxTools (${maxTools})`
    const named = left.slice(0, NAMED).join(', ') + (left.length > NAMED ? ` and ${left.length - NAMED} more` : '')
    this.logger.warn('[%s] %d of %d tools not offered, %s: %s', name, left.length, tools.length, why, named)
    return tools.slice(0, room)
  }

  /** Registers the listed tools, keeping those whose listing did not change, removing those that went away. */
  private sync(tools: ListedTool[]) {
    const seen = new Set<string>()
    for (const tool of tools) {
      const listing = JSON.stringify(tool)
      seen.add(tool.name)
      const current = this.registered.get(tool.name)
      if (current?.listing === listing) continue
      current?.dispose()
      this.registered.delete(tool.name)
      const definition = this.definition(tool)
      if (!definition) continue
      try {
        this.registered.set(tool.name, { listing, dispose: this.ctx.tools.register(definition) })
      } catch (error) {
        this.logger.warn('[%s] tool %s not offered: %s', this.config.name, tool.name, describeError(error))
      }
    }
    for (const [name, entry] of this.registered) {
      if (seen.has(name)) continue
      entry.dispose()
      this.registered.delete(name)
    }
  }

  private definition(tool: ListedTool): ToolDefinition | undefined {
    const name = `${this.config.name}__${tool.name}`
    if (!/^[a-zA-Z0-9_-]+$/.test(tool.name) || name.length > MAX_TOOL_NAME) {
      this.logger.warn('[%s] tool %s not offered: "%s" is not a valid tool name (letters, digits, _ and -, at most %d)', this.config.name, tool.name, name, MAX_TOOL_NAME)
      return undefined
    }
    return {
      name,
      description: `${tool.description ?? ''} (MCP server ${this.config.name})`.trim(),
      parameters: inputSchema(tool.inputSchema),
      kind: mcpKind(tool.annotations),
      execute: (args, call) => this.call(tool.name, args as Record<string, unknown>, call.signal),
    }
  }

  /**
   * One `tools/call` with a hard deadline: whatever the server or the connection does, the call settles by
   * `timeoutMs` (the server is told to cancel), so a hung server never hangs a turn.
   */
  private async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
    const client = this.client
    const { name, timeoutMs } = this.config
    if (!client) return failure('MCP_UNAVAILABLE', `The MCP server "${name}" is not connected (${this.closed ? 'it was shut down' : 'reconnecting'}). Try again later or use other tools.`)
    const deadline = AbortSignal.timeout(timeoutMs)
    const cancel = AbortSignal.any([signal, deadline])
    const timedOut = new Promise<ToolResult>((resolve) => {
      const done = () => resolve(failure('MCP_TIMEOUT', `The MCP server "${name}" did not answer ${tool} within ${timeoutMs} ms; the call was cancelled.`))
      if (deadline.aborted) return done()
      deadline.addEventListener('abort', done, { once: true })
    })
    const answered = client.callTool({ name: tool, arguments: args }, { signal: cancel, timeout: timeoutMs })
      .then((result) => toToolResult(result as Parameters<typeof toToolResult>[0], this.config.maxResultChars))
      .catch((error): ToolResult => {
        if (deadline.aborted) return failure('MCP_TIMEOUT', `The MCP server "${name}" did not answer ${tool} within ${timeoutMs} ms; the call was cancelled.`)
        if (this.client !== client || this.closed) return failure('MCP_CONNECTION_LOST', `The connection to the MCP server "${name}" was lost during the call (${describeError(error)}).`)
        if (this.kind === 'http' && isNetworkError(error)) this.lost(describeError(error))
        return failure('MCP_ERROR', `The MCP server "${name}" answered ${tool} with an error: ${describeError(error)}`)
      })
    return Promise.race([answered, timedOut])
  }

  /** The connection is gone: the tools stay registered (calls say MCP_UNAVAILABLE) while it is re-established. */
  private lost(why: string) {
    if (this.closed || this.reconnecting) return
    const client = this.client
    this.client = undefined
    void client?.close().catch(() => {})
    this.logger.warn('[%s] connection lost (%s); reconnecting', this.config.name, why)
    this.reconnecting = this.reconnect().finally(() => (this.reconnecting = undefined))
  }

  private async reconnect() {
    let wait = this.config.reconnectDelayMs
    while (!this.closed) {
      // Unref'd: a pending retry must not keep a finished process alive.
      if (!(await delay(wait, { signal: this.stopWaiting.signal, ref: false })) || this.closed) return
      try {
        await this.connect()
        return
      } catch (error) {
        this.logger.warn('[%s] %s; next attempt in %d ms', this.config.name, describeError(error), Math.min(wait * 2, this.config.maxReconnectDelayMs))
        wait = Math.min(wait * 2, this.config.maxReconnectDelayMs)
      }
    }
  }
}

/** A failure to reach an HTTP server at all (as opposed to an answer that is an error). */
function isNetworkError(error: unknown): boolean {
  const text = describeError(error)
  return /fetch failed|ECONNREFUSED|ECONNRESET|socket hang up|EPIPE|other side closed/i.test(text)
}
