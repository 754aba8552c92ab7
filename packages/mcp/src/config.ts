import Schema from 'schemastery'

export const Config = Schema.object({
  name: Schema.string().pattern(/^[a-zA-Z0-9-]{1,32}$/).required()
    .description('The server\'s name, the prefix of its tools (`name__tool`): letters, digits and `-`, up to 32.'),
  command: Schema.string().description('stdio: the program that starts the server.'),
  args: Schema.array(String).default([]).description('stdio: its arguments.'),
  env: Schema.dict(String).default({}).description('stdio: variables added to the small default environment (PATH, HOME, ...); use ${VAR} for keys.'),
  cwd: Schema.string().description('stdio: its working directory (default: the process cwd).'),
  url: Schema.string().description('Streamable HTTP: the server\'s endpoint.'),
  headers: Schema.dict(String).default({}).description('Streamable HTTP: request headers; use ${VAR} for tokens.'),
  timeoutMs: Schema.natural().min(1).default(60_000).description('A call still unanswered after this long fails (MCP_TIMEOUT).'),
  connectTimeoutMs: Schema.natural().min(1).default(30_000).description('Connecting (start and handshake) fails after this long.'),
  reconnectDelayMs: Schema.natural().min(1).default(500).description('First wait before reconnecting after the connection is lost; doubled each failed attempt.'),
  maxReconnectDelayMs: Schema.natural().min(1).default(30_000).description('Longest wait between reconnection attempts.'),
  maxResultChars: Schema.natural().min(1000).default(100_000).description('A call\'s result text is cut to this many characters, with a note to the model.'),
  maxMessageBytes: Schema.natural().min(65_536).default(4 * 1024 * 1024).description('stdio: a message longer than this is not parsed; a result is read from its start, cut, and the connection kept.'),
  maxTools: Schema.natural().min(1).default(64).description('At most this many of the server\'s tools are offered (in listing order); a warning names the rest.'),
  maxTotalTools: Schema.natural().min(1).default(128).description('No tool of this server is offered once the registry holds this many tools (of every source).'),
  tools: Schema.array(String).default([]).description('The server\'s tools to offer (their own names). Default (or empty): all.'),
})
export type McpConfig = Schemastery.TypeT<typeof Config>

/** Checks what the schema cannot: exactly one transport, and the name separator. */
export function checkConfig(config: McpConfig): 'stdio' | 'http' {
  if (config.command && config.url) throw new Error(`mcp server "${config.name}": give either command (stdio) or url (HTTP), not both`)
  if (!config.command && !config.url) throw new Error(`mcp server "${config.name}": give a command (stdio) or a url (streamable HTTP)`)
  if (config.url) {
    let url: URL
    try {
      url = new URL(config.url)
    } catch {
      throw new Error(`mcp server "${config.name}": url "${config.url}" is not a URL`)
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`mcp server "${config.name}": url must be http or https, not ${url.protocol}`)
  }
  return config.command ? 'stdio' : 'http'
}
