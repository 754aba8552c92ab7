// In-process ACP tests: the SDK's client connected to serveAcp over a pair of byte pipes carrying
// newline-delimited JSON, as stdio would, on the real core plugins with the scripted model.
import * as acp from '@agentclientprotocol/sdk'
import { createHarness, type Harness, type HarnessOptions } from '@goalkeeper/test-kit'
import { afterEach } from 'vitest'
import { serveAcp, type AcpServer, type AcpServerOptions } from '../src/index.ts'

export interface Pipe {
  /** The agent's side, for serveAcp. */
  agent: acp.Stream
  /** The client's side, for the SDK's client. */
  client: acp.Stream
  /** Ends the client's output: the agent sees its input close, as when an editor quits. */
  hangUp(): Promise<void>
}

/** Two byte pipes with ndJSON framing at each end. */
export function pipe(): Pipe {
  const toAgent = new TransformStream<Uint8Array, Uint8Array>()
  const toClient = new TransformStream<Uint8Array, Uint8Array>()
  return {
    agent: acp.ndJsonStream(toClient.writable, toAgent.readable),
    client: acp.ndJsonStream(toAgent.writable, toClient.readable),
    hangUp: async () => {
      const writer = toAgent.writable.getWriter()
      await writer.close().catch(() => {})
    },
  }
}

export type Answer = acp.RequestPermissionResponse | 'never'

export interface TestClient {
  connection: acp.ClientConnection
  agent: acp.ClientContext
  /** Every `session/update` received, in order. */
  updates: acp.SessionNotification[]
  /** Resolves with the first update (from `from` on) that satisfies `test`, as soon as it arrives. */
  until(test: (update: acp.SessionUpdate, notification: acp.SessionNotification) => boolean, from?: number): Promise<acp.SessionUpdate>
  /** Permission requests received. */
  permissions: acp.RequestPermissionRequest[]
  /** How the next permission requests are answered (`never`: no answer). */
  answers: Answer[]
  /** Resolves once `count` permission requests have arrived. */
  asked(count: number): Promise<void>
  /** Updates of one session, of one kind. */
  of<K extends acp.SessionUpdate['sessionUpdate']>(sessionId: string, kind: K): Extract<acp.SessionUpdate, { sessionUpdate: K }>[]
  /** Initializes with the given client capabilities. */
  initialize(capabilities?: acp.ClientCapabilities): Promise<acp.InitializeResponse>
}

export function testClient(stream: acp.Stream): TestClient {
  const updates: acp.SessionNotification[] = []
  const watchers = new Set<() => void>()
  const permissions: acp.RequestPermissionRequest[] = []
  const answers: Answer[] = []
  const app = acp.client({ name: 'test-client' })
    .onNotification('session/update', ({ params }) => {
      updates.push(params)
      for (const watcher of [...watchers]) watcher()
    })
    .onRequest('session/request_permission', ({ params }) => {
      permissions.push(params)
      for (const watcher of [...watchers]) watcher()
      const answer = answers.shift() ?? 'never'
      return answer === 'never' ? new Promise<never>(() => {}) : answer
    })
  const connection = app.connect(stream)
  const client: TestClient = {
    connection,
    agent: connection.agent,
    updates,
    permissions,
    answers,
    until: (test, from = 0) =>
      new Promise((resolve) => {
        const check = () => {
          for (let index = from; index < updates.length; index++) {
            if (!test(updates[index].update, updates[index])) continue
            watchers.delete(check)
            resolve(updates[index].update)
            return
          }
        }
        watchers.add(check)
        check()
      }),
    asked: (count) =>
      new Promise((resolve) => {
        const check = () => {
          if (permissions.length < count) return
          watchers.delete(check)
          resolve()
        }
        watchers.add(check)
        check()
      }),
    of: (sessionId, kind) => updates.filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === kind).map((n) => n.update) as any,
    initialize: (capabilities = {}) =>
      connection.agent.request('initialize', { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: capabilities, clientInfo: { name: 'test-client', version: '1' } }),
  }
  return client
}

export interface Setup {
  h: Harness
  server: AcpServer
  client: TestClient
  pipe: Pipe
  /** A second connection to the same composition (after the first one closed, for example). */
  reconnect(): { server: AcpServer; client: TestClient; pipe: Pipe }
}

const harnesses: Harness[] = []
const connections: TestClient[] = []
afterEach(async () => {
  for (const client of connections.splice(0)) client.connection.close()
  for (const h of harnesses.splice(0)) await h.dispose()
})

/** The real stack with the goal plugins, and one client connected and initialized. */
export async function setup(options: HarnessOptions & { goals?: boolean; server?: AcpServerOptions; capabilities?: acp.ClientCapabilities } = {}): Promise<Setup> {
  const h = await createHarness(options)
  harnesses.push(h)
  if (options.goals !== false) {
    await h.load(await import('@goalkeeper/goal'), {})
    await h.load(await import('@goalkeeper/tool-goal'), { blockedThreshold: 0 })
    await h.load(await import('@goalkeeper/goal-session'))
  }
  const connect = () => {
    const p = pipe()
    const server = serveAcp(h.root, p.agent, { version: 'test', ...options.server })
    const client = testClient(p.client)
    connections.push(client)
    return { server, client, pipe: p }
  }
  const first = connect()
  await first.client.initialize(options.capabilities)
  return { h, ...first, reconnect: connect }
}

export const textOf = (updates: acp.SessionUpdate[]) =>
  updates.map((update) => ('content' in update && update.content && !Array.isArray(update.content) && update.content.type === 'text' ? update.content.text : '')).join('')

/**
 * The moment a scripted model step is called (`called()` from inside the step): a goal round's turn saves
 * its start before its first model call, so a round shown as running has not necessarily called the model.
 */
export function modelCall() {
  let called!: () => void
  const reached = new Promise<void>((resolve) => (called = resolve))
  return { called: () => called(), reached }
}
