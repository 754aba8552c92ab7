// A TCP proxy in front of a server (the tests' PostgreSQL): what a failover looks like to the server's
// clients, without touching the server. Connections are forwarded byte for byte; `failover` drops them all
// at once and refuses new ones for a while, then forwards again to the same server.
import net from 'node:net'

export interface TcpProxy {
  /** The target's URL with the proxy's host and port in place of the server's (user, password, path kept). */
  url: string
  /** Connections forwarded so far. */
  readonly forwarded: number
  /** Connections refused (reset as they arrived) during failovers so far. */
  readonly refused: number
  /** Forwarded connections open now. */
  readonly open: number
  /**
   * A failover as clients see it: every open connection is reset at once, new ones are reset as they arrive
   * for `downMs`, then connections are forwarded again. Resolves when forwarding resumed, with how many
   * connections were dropped and how many were refused meanwhile.
   */
  failover(downMs: number): Promise<{ dropped: number; refused: number }>
  /** Stops listening and drops every connection. */
  close(): Promise<void>
}

/** Starts a proxy on a free port of 127.0.0.1 that forwards to the host and port of `targetUrl`. */
export async function startTcpProxy(targetUrl: string): Promise<TcpProxy> {
  const target = new URL(targetUrl)
  const targetPort = Number(target.port || 5432)
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>()
  let down = false
  let forwarded = 0
  let refused = 0
  const server = net.createServer((client) => {
    if (down) {
      refused++
      client.on('error', () => {})
      client.resetAndDestroy()
      return
    }
    forwarded++
    const upstream = net.connect(targetPort, target.hostname)
    const pair = { client, upstream }
    pairs.add(pair)
    const end = () => {
      pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    for (const socket of [client, upstream]) socket.on('error', end).on('close', end)
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as net.AddressInfo
  const proxied = new URL(targetUrl)
  proxied.hostname = '127.0.0.1'
  proxied.port = String(port)
  const dropAll = () => {
    const dropped = pairs.size
    for (const pair of [...pairs]) {
      pairs.delete(pair)
      pair.client.resetAndDestroy()
      pair.upstream.destroy()
    }
    return dropped
  }
  return {
    url: proxied.toString(),
    get forwarded() {
      return forwarded
    },
    get refused() {
      return refused
    },
    get open() {
      return pairs.size
    },
    async failover(downMs) {
      down = true
      const before = refused
      const dropped = dropAll()
      // The outage is the scenario's length, not a wait for something to happen.
      await new Promise((resolve) => setTimeout(resolve, downMs))
      down = false
      return { dropped, refused: refused - before }
    },
    async close() {
      down = true
      dropAll()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
