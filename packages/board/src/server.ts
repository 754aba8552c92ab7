import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createMasker, describeError } from '@goalkeeper/kit'
import { goalSummaryFold } from '@goalkeeper/goal'
import { waitingApprovalsFold } from '@goalkeeper/permissions'
import type { SessionService, SessionSummary, SummaryFold } from '@goalkeeper/session'
import { type BoardControls, controlsOf, controlState, postControl } from './controls.ts'
import { goalView } from './goal-view.ts'
import { watchStore } from './live.ts'
import {
  type BoardState, MAX_PAGE_LIMIT, type OverviewPage, type OverviewQuery, overviewRows, type OverviewRow, PAGE_LIMIT,
  queryOverview, STATES,
} from './overview.ts'
import { CLIENT_JS } from './page/client.ts'
import { CONTENT_SECURITY_POLICY, SHELL_HTML } from './page/shell.ts'
import { STYLE_CSS } from './page/style.ts'
import { storesOf } from './stores.ts'
import { isLoopback, MIN_TOKEN_CHARS, newToken, tokenMatches } from './token.ts'

export interface BoardOptions {
  /** One session store, or several shown as one (projects' files and a fleet's database). */
  sessions: SessionService | readonly SessionService[]
  /** The control channel to the processes that run the goals (default: `@goalkeeper/control`'s socket directory). */
  controls?: BoardControls
  /** Default 127.0.0.1. Anything but loopback needs `token`, chosen by the person. */
  host?: string
  /** Default 0: a free port. */
  port?: number
  /** Default: a fresh random token. */
  token?: string
  /** Summary folds the listing keeps besides `goal` (the host adds `worker`). */
  folds?: Readonly<Record<string, SummaryFold>>
  /** The commands a goal page offers to resume a session from a terminal. */
  resumeCommands?: (session: string, cwd: string) => string[]
  /** Called with what went wrong serving a request (the page gets a short message). */
  log?: (line: string) => void
}

export interface Board {
  /** The address to open: carries the token once; the page then keeps it in a cookie. */
  url: string
  origin: string
  token: string
  close(): Promise<void>
}

export class BoardError extends Error {}

const COOKIE = 'goalkeeper_board'

function cookieOf(request: IncomingMessage): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=')
    if (name === COOKIE) return value.join('=')
  }
  return undefined
}

const HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
}

/**
 * Serves the board: the page, its JSON (overview pages, one goal) and an event stream that says when the
 * store changed. Every request needs the token (the cookie the printed URL sets, or `x-board-token`) and a
 * Host of this server; a request that is not a GET also needs an Origin of this server (no cross-site posts).
 * Sessions are only read.
 */
export async function startBoard(options: BoardOptions): Promise<Board> {
  const host = options.host ?? '127.0.0.1'
  if (!isLoopback(host) && !options.token) throw new BoardError(`a board on ${host} is reachable from other machines: it needs a token you choose (--token, at least ${MIN_TOKEN_CHARS} characters)`)
  if (options.token !== undefined && options.token.length < MIN_TOKEN_CHARS) throw new BoardError(`the token must have at least ${MIN_TOKEN_CHARS} characters`)
  const token = options.token ?? newToken()
  const masker = createMasker()
  const folds = { ...options.folds, goal: goalSummaryFold, approvals: waitingApprovalsFold }
  const stores = storesOf(Array.isArray(options.sessions) ? options.sessions : [options.sessions as SessionService])
  const controls = options.controls ?? controlsOf()
  const log = options.log ?? (() => {})

  const streams = new Set<ServerResponse>()
  const notify = () => {
    for (const stream of streams) stream.write('event: change\ndata: {}\n\n')
  }
  // Every session's row, from the whole listing (kept summaries), built at most once per store change and
  // only once a page was asked for. Until it is ready, pages come from the most recent sessions (`recent`),
  // and the pages served so are told to ask again once it is.
  let whole: WholeListing | undefined
  let partialServed = false
  const wholeRows = (): Promise<OverviewRow[]> => {
    if (!whole) {
      const building: WholeListing = { rows: stores.list(folds).then(overviewRows) }
      whole = building
      building.rows.then((rows) => {
        if (whole !== building) return
        building.ready = rows
        if (partialServed) {
          partialServed = false
          notify()
        }
      }, (error) => {
        if (whole === building) whole = undefined
        log(`board: listing the sessions: ${describeError(error)}`)
      })
    }
    return whole.rows
  }
  /**
   * A page from the most recent sessions, asked for in growing windows until it is full (with one row
   * more, so the page knows there is a next one); undefined for a sort other than by last activity, or a
   * filter that the most recent `RECENT_MOST` sessions do not fill a page of (the whole listing answers).
   */
  const recentPage = async (query: OverviewQuery): Promise<OverviewPage | undefined> => {
    if ((query.sort ?? 'updated') !== 'updated') return undefined
    const limit = Math.min(MAX_PAGE_LIMIT, Math.max(1, query.limit ?? PAGE_LIMIT))
    const wanted = Math.max(0, query.offset ?? 0) + limit + 1
    for (let window = wanted; window <= RECENT_MOST; window *= 4) {
      const recent = await stores.recent(window, folds)
      const rows = overviewRows(recent.sessions)
      // Every session there is: the page is exact.
      if (recent.complete) return queryOverview(rows, query)
      const page = queryOverview(rows, query, false)
      if (page.total >= wanted) return { ...page, partial: true }
    }
    return undefined
  }
  const overviewPage = async (query: OverviewQuery): Promise<OverviewPage> => {
    if (whole?.ready) return queryOverview(whole.ready, query)
    const recent = await recentPage(query)
    if (!recent) return queryOverview(await wholeRows(), query)
    if (!recent.partial) return recent
    // Started once this page is built, not alongside it: the first screen does not wait for the listing.
    partialServed = true
    wholeRows().catch(() => {})
    return recent
  }
  const watcher = watchStore({
    dirs: stores.dirs,
    onChange: () => {
      whole = undefined
      notify()
    },
    // One query of the newest session and the count (on a database), not a listing.
    probe: async () => stampOf(await stores.recent(1, folds)),
  })

  let origin = ''
  const allowedHosts = new Set<string>()
  const send = (response: ServerResponse, status: number, type: string, body: string) => {
    response.writeHead(status, { ...HEADERS, 'content-type': type })
    response.end(body)
  }
  const sendJson = (response: ServerResponse, value: unknown) => send(response, 200, 'application/json; charset=utf-8', masker.mask(JSON.stringify(value)))
  const refuse = (response: ServerResponse, status: number, why: string) => send(response, status, 'text/plain; charset=utf-8', `${why}\n`)

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', origin)
    // A page of another site that resolves its own name to this address (DNS rebinding) sends its own Host.
    if (!allowedHosts.has(request.headers.host ?? '')) return refuse(response, 403, 'unknown host')
    const given = url.searchParams.get('token') ?? undefined
    if (request.method === 'GET' && url.pathname === '/' && given !== undefined) {
      if (!tokenMatches(given, token)) return refuse(response, 403, 'wrong token: open the address goalkeeper board printed')
      // The token moves from the address into a cookie the browser sends only to this page (SameSite).
      response.writeHead(303, { ...HEADERS, location: '/', 'set-cookie': `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/` })
      return response.end()
    }
    const header = request.headers['x-board-token']
    if (!tokenMatches(cookieOf(request) ?? (typeof header === 'string' ? header : undefined), token)) return refuse(response, 403, 'token required: open the address goalkeeper board printed')
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      // Controls change goals: only this page may send them, never a page of another origin.
      if (request.headers.origin !== origin) return refuse(response, 403, 'cross-origin request refused')
      const control = /^\/api\/goal\/([^/]+)\/control$/.exec(url.pathname)
      if (request.method !== 'POST' || !control) return refuse(response, 404, 'no such control')
      // A form of another site cannot send JSON; only the page's own script does.
      if (!/^application\/json\b/.test(request.headers['content-type'] ?? '')) return refuse(response, 415, 'a control is sent as application/json')
      const id = decodeURIComponent(control[1])
      if (!/^[\w-][\w.-]*$/.test(id)) return refuse(response, 404, 'no such session')
      const outcome = await postControl(controls, id, await jsonBody(request))
      response.writeHead(outcome.status, { ...HEADERS, 'content-type': 'application/json; charset=utf-8' })
      return response.end(masker.mask(JSON.stringify(outcome.body)))
    }
    if (url.pathname === '/' || /^\/goal\/[^/]+$/.test(url.pathname)) return send(response, 200, 'text/html; charset=utf-8', SHELL_HTML)
    if (url.pathname === '/board.js') return send(response, 200, 'text/javascript; charset=utf-8', CLIENT_JS)
    if (url.pathname === '/board.css') return send(response, 200, 'text/css; charset=utf-8', STYLE_CSS)
    if (url.pathname === '/api/overview') {
      return sendJson(response, await overviewPage(queryOf(url.searchParams)))
    }
    const goal = /^\/api\/goal\/([^/]+)$/.exec(url.pathname)
    if (goal) {
      const id = decodeURIComponent(goal[1])
      if (!/^[\w-][\w.-]*$/.test(id)) return refuse(response, 404, 'no such session')
      let opened
      try {
        opened = await stores.open(id, { readOnly: true })
      } catch (error) {
        if ((error as { code?: unknown }).code === 'SESSION_NOT_FOUND') return refuse(response, 404, 'no such session')
        throw error
      }
      let view
      try {
        const { session } = opened
        view = goalView(id, session.records, session.firstSeq > 0 ? { firstSeq: session.firstSeq, cwd: session.header.cwd } : undefined)
      } finally {
        await opened.close()
      }
      return sendJson(response, { view, resume: options.resumeCommands?.(id, view.cwd) ?? [], control: await controlState(controls, id) })
    }
    if (url.pathname === '/api/events') {
      response.writeHead(200, { ...HEADERS, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' })
      response.write(': live\n\n')
      streams.add(response)
      request.on('close', () => streams.delete(response))
      return
    }
    return refuse(response, 404, 'not found')
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error) => {
      log(`board: ${request.method} ${request.url}: ${describeError(error)}`)
      if (!response.headersSent) refuse(response, 500, 'the board could not read the session store; see the terminal')
      else response.end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  const shown = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
  origin = `http://${shown}:${port}`
  allowedHosts.add(`${shown}:${port}`)
  if (isLoopback(host)) for (const name of ['127.0.0.1', 'localhost', '[::1]']) allowedHosts.add(`${name}:${port}`)
  return {
    url: `${origin}/?token=${token}`,
    origin,
    token,
    async close() {
      watcher.close()
      for (const stream of streams) stream.end()
      streams.clear()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

function queryOf(params: URLSearchParams): OverviewQuery {
  const state = params.get('state')
  const sort = params.get('sort')
  const number = (name: string) => {
    const value = Number(params.get(name))
    return Number.isInteger(value) && value >= 0 ? value : undefined
  }
  return {
    ...(state && (STATES as readonly string[]).includes(state) ? { state: state as BoardState } : {}),
    ...(params.get('text') ? { text: params.get('text')! } : {}),
    ...(sort === 'updated' || sort === 'round' || sort === 'tokens' || sort === 'objective' ? { sort } : {}),
    ...(number('offset') !== undefined ? { offset: number('offset') } : {}),
    ...(number('limit') ? { limit: number('limit') } : {}),
  }
}

/** A control's body: small JSON, or undefined (the control then says what is missing). */
async function jsonBody(request: IncomingMessage): Promise<unknown> {
  let text = ''
  for await (const chunk of request) {
    text += chunk
    if (text.length > 16_384) return undefined
  }
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Every session's overview row, being built (`rows`) or built (`ready`). */
interface WholeListing {
  rows: Promise<OverviewRow[]>
  ready?: OverviewRow[]
}

/** The most recent sessions a page is built from, at most, before it waits for the whole listing instead. */
const RECENT_MOST = 2000

/** What a database probe compares to tell a change: how many sessions and the newest one's activity. */
const stampOf = ({ sessions, total }: { sessions: readonly SessionSummary[]; total: number }) =>
  `${total} ${sessions[0]?.id ?? ''} ${sessions[0]?.updatedAt ?? 0}`
