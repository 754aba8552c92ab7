import { stat } from 'node:fs/promises'
import path from 'node:path'
import {
  agent as agentApp, PROTOCOL_VERSION, RequestError,
  type AgentContext, type ClientCapabilities, type InitializeResponse, type ListSessionsResponse, type Stream,
} from '@agentclientprotocol/sdk'
import { describeError, liveMasker, redactedLabel } from '@goalkeeper/kit'
import type { Context } from 'cordis'
import { ErrorCodes, invalidParams, sessionNotFound, toRequestError } from './errors.ts'
import { goalCommandOf, GoalRequest } from './goal-extension.ts'
import { GOAL_ACTIONS, GOAL_EXTENSION_VERSION, GOAL_METHOD, type GoalSnapshot } from './goal-view.ts'
import { maskedStream } from './masking.ts'
import type { PermissionAnswer } from '@goalkeeper/permissions'
import { PERMISSION_DENIER, PermissionAsker, type AskPolicy } from './permissions.ts'
import { AcpSession } from './session.ts'

export interface AcpServerOptions {
  /** The version `initialize` reports in `agentInfo`. */
  version?: string
  /** Where secret variables are read from for masking (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>
  /** Sessions listed per `session/list` page (default 100). */
  pageSize?: number
  /**
   * Tool calls of this connection's sessions that need a person's permission besides those the permission
   * mode asks about (`@goalkeeper/permissions`, through `permissions/ask`); both are asked through
   * `session/request_permission`. Default: none beyond the mode's.
   */
  ask?: AskPolicy
  /** How long a permission request waits for the client's answer before the call is denied (default 5 minutes). */
  permissionTimeoutMs?: number
}

export interface AcpServer {
  /** The client's capabilities, once it has sent `initialize`. */
  readonly clientCapabilities: ClientCapabilities | undefined
  /** The sessions this connection serves, by id. */
  readonly sessions: ReadonlyMap<string, AcpSession>
  /** Resolves when the connection has closed and every session has settled (see `close`). */
  readonly closed: Promise<void>
  /** Ends the connection: running work stops as with Ctrl-C, sessions are flushed and their agents shut down. */
  close(): Promise<void>
}

/** The answer of `_goalkeeper/goal`. */
export interface GoalResponse {
  ok: true
  /** What a person would read after the same `/goal` command. */
  message: string
  goal: GoalSnapshot | null
}

/** Characters of streamed text held back at least: room for a shaped secret (`sk-...`) to be recognised. */
const MIN_HOLD = 64

/**
 * Serves goalkeeper as an ACP agent on `stream` (usually stdin/stdout, see `stdioStream`), with the services
 * of `ctx`: `sessions` and `agents` are required, `goals` and the round driver are used when loaded.
 * Everything the client receives passes the project's secret masker first.
 */
export function serveAcp(ctx: Context, stream: Stream, options: AcpServerOptions = {}): AcpServer {
  const logger = ctx.logger('acp')
  // Live: the session signing key becomes a held secret only when the first session is made.
  const masker = liveMasker({ env: options.env ?? process.env, label: redactedLabel })
  const mask = (text: string) => masker.mask(text)
  // Streamed text keeps this much back, so that a secret split over two deltas is still masked whole.
  const hold = Math.max(MIN_HOLD, ...masker.secrets.map((secret) => JSON.stringify(secret.value).length))
  const sessions = new Map<string, AcpSession>()
  const pageSize = options.pageSize ?? 100
  let clientCapabilities: ClientCapabilities | undefined
  let client!: AgentContext
  let closing: Promise<void> | undefined
  // Commands run on a context that injects `goals` (a property read without inject throws in Cordis 4);
  // it follows the goal plugin through reloads.
  let goalContext: Context | undefined
  const goalFiber = ctx.inject(['goals'], (inner) => {
    goalContext = inner
    return () => {
      if (goalContext === inner) goalContext = undefined
    }
  })

  const service = <K extends 'sessions' | 'agents'>(name: K) => {
    const found = ctx.get(name)
    if (!found) throw new RequestError(ErrorCodes.INTERNAL, `the composition does not provide ctx.${name}; add its plugin to cordis.yml`)
    return found
  }
  const sessionOf = (sessionId: string) => {
    const session = sessions.get(sessionId)
    if (!session) throw sessionNotFound(sessionId)
    return session
  }
  const workspace = async (cwd: string, field = 'cwd') => {
    if (!path.isAbsolute(cwd)) throw invalidParams(`${field}: "${cwd}" is not an absolute path`, { [field]: cwd })
    const info = await stat(cwd).catch(() => undefined)
    if (!info?.isDirectory()) throw invalidParams(`${field}: "${cwd}" is not a directory`, { [field]: cwd })
    return path.resolve(cwd)
  }
  const ignoredServers = (servers: unknown[] | undefined) => {
    if (servers?.length) logger.warn('the client offered %d MCP server(s); goalkeeper does not connect to client MCP servers, they are ignored', servers.length)
  }
  const askers = new Map<string, PermissionAsker>()
  const follow = (agent: AcpSession['agent'], replay: boolean) => {
    const session = new AcpSession({ ctx, client, logger, mask, hold, goalContext: () => goalContext }, agent)
    sessions.set(session.id, session)
    askers.set(session.id, new PermissionAsker(client, session.id, session.cwd, options.permissionTimeoutMs ?? 300_000, logger))
    session.attach(replay)
    return session
  }
  // Every handler answers a failure as a JSON-RPC error naming it, never by throwing past the connection.
  const guarded = <P, R>(method: string, handler: (params: P, signal: AbortSignal) => Promise<R> | R) =>
    async ({ params, signal }: { params: P; signal: AbortSignal }): Promise<R> => {
      try {
        return await handler(params, signal)
      } catch (error) {
        const answer = toRequestError(error)
        if (answer.code === ErrorCodes.INTERNAL) logger.warn('%s failed: %s', method, describeError(error))
        throw answer
      }
    }

  const app = agentApp({ name: 'goalkeeper' })
    .onRequest('initialize', guarded('initialize', (params): InitializeResponse => {
      clientCapabilities = params.clientCapabilities ?? {}
      const goals = !!ctx.get('goals')
      return {
        protocolVersion: PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: false, audio: false, embeddedContext: true },
          mcpCapabilities: { http: false, sse: false },
          sessionCapabilities: { list: {} },
        },
        authMethods: [],
        agentInfo: { name: 'goalkeeper', title: 'goalkeeper', version: options.version ?? '0.0.0' },
        ...(goals ? { _meta: { goal: { version: GOAL_EXTENSION_VERSION, controlMethod: GOAL_METHOD, actions: [...GOAL_ACTIONS] } } } : {}),
      }
    }))
    .onRequest('session/new', guarded('session/new', async (params) => {
      const cwd = await workspace(params.cwd)
      ignoredServers(params.mcpServers)
      const agent = await service('agents').create({ cwd })
      const session = follow(agent, false)
      // After the response: a client files updates under a session id it has been told.
      setImmediate(() => void session.announce())
      return { sessionId: session.id }
    }))
    .onRequest('session/load', guarded('session/load', async (params) => {
      const cwd = await workspace(params.cwd)
      ignoredServers(params.mcpServers)
      let session = sessions.get(params.sessionId)
      const mismatch = (sessionCwd: string) =>
        invalidParams(`cwd: session ${params.sessionId} belongs to ${sessionCwd}, not ${cwd}`, { cwd, sessionCwd })
      if (session) {
        if (session.cwd !== cwd) throw mismatch(session.cwd)
        session.replay(true)
      } else {
        const agents = service('agents')
        const live = agents.get(params.sessionId)
        // A reopened session's goal is disarmed, as on any reopen: nothing runs until the person resumes it.
        const agent = live ?? await agents.resume(params.sessionId)
        if (agent.session.header.cwd !== cwd) {
          if (!live) await agent.dispose()
          throw mismatch(agent.session.header.cwd)
        }
        session = follow(agent, true)
      }
      await session.announce()
      // What the log's signatures said when it was opened (a session that loads is signed).
      const { integrity } = service('agents').get(params.sessionId)?.session ?? {}
      return integrity ? { _meta: { goalkeeper: { integrity } } } : {}
    }))
    .onRequest('session/list', guarded('session/list', async (params): Promise<ListSessionsResponse> => {
      const cwd = params.cwd ? await workspace(params.cwd) : undefined
      const offset = params.cursor ? Number(params.cursor) : 0
      if (!Number.isSafeInteger(offset) || offset < 0) throw invalidParams(`cursor: "${params.cursor}" is not a cursor this agent gave out`, { cursor: params.cursor })
      const all = (await service('sessions').list()).filter((summary) => !cwd || summary.cwd === cwd)
      const page = all.slice(offset, offset + pageSize)
      return {
        sessions: page.map((summary) => ({
          sessionId: summary.id,
          cwd: summary.cwd,
          ...(summary.title ? { title: summary.title } : {}),
          updatedAt: new Date(summary.updatedAt).toISOString(),
          _meta: { goalkeeper: { createdAt: new Date(summary.createdAt).toISOString(), records: summary.records, ...(summary.parent ? { parent: summary.parent } : {}), ...(summary.problem ? { problem: summary.problem } : {}) } },
        })),
        ...(offset + pageSize < all.length ? { nextCursor: String(offset + pageSize) } : {}),
      }
    }))
    .onRequest('session/prompt', guarded('session/prompt', (params, signal) => sessionOf(params.sessionId).prompt(params.prompt, signal)))
    .onNotification('session/cancel', ({ params }) => {
      const session = sessions.get(params.sessionId)
      if (session) session.cancel()
      else logger.warn('session/cancel for unknown session %s ignored', params.sessionId)
    })
    .onRequest(GOAL_METHOD, GoalRequest, guarded(GOAL_METHOD, async (params: GoalRequest): Promise<GoalResponse> => {
      const session = sessionOf(params.sessionId)
      const result = session.runGoalCommand(goalCommandOf(params))
      // The updates the change caused reach the client before the answer does.
      await session.flushed()
      if (!result.ok) {
        const code = result.code === 'GOAL_CORRUPT_LOG' || result.code === 'GOAL_UNAVAILABLE' ? ErrorCodes.INTERNAL : ErrorCodes.INVALID_PARAMS
        throw new RequestError(code, result.message, { code: result.code, goal: session.goalSnapshot() })
      }
      return { ok: true, message: result.message, goal: session.goalSnapshot() }
    }))

  // Outermost, so that the person is asked about the arguments as they will run, and only about calls no
  // other listener refused.
  const stopAsking = ctx.on('tool/before-call', async (review, next) => {
    const verdict = await next()
    const asker = askers.get(review.call.agent.id)
    if (!asker || verdict.kind === 'deny' || !options.ask?.(review)) return verdict
    const answer = await asker.ask(review)
    return answer === 'allow' || answer === 'always' ? verdict : answer
  }, { prepend: true })
  // The calls the permission mode would ask a person about go to this connection's person; no answer denies.
  const stopAnswering = ctx.on('permissions/ask', (request) => {
    const asker = askers.get(request.review.call.agent.id)
    return asker?.ask(request.review).then((answer): PermissionAnswer => {
      if (answer === 'allow' || answer === 'always') return { kind: 'allow', scope: answer === 'always' ? 'session' : 'once', by: PERMISSION_DENIER }
      return { kind: 'deny', by: PERMISSION_DENIER, reason: answer.kind === 'deny' ? answer.reason : undefined }
    })
  })

  const connection = app.connect(maskedStream(stream, mask))
  client = connection.client

  const close = () =>
    (closing ??= (async () => {
      connection.close()
      stopAsking()
      stopAnswering()
      const settling = [...sessions.values()].map((session) =>
        session.detach().catch((error) => logger.warn('session %s did not settle: %s', session.id, describeError(error))))
      await Promise.all(settling)
      await goalFiber.dispose()
    })())
  const closed = connection.closed.then(close, close)

  return {
    get clientCapabilities() { return clientCapabilities },
    sessions,
    closed,
    close,
  }
}
