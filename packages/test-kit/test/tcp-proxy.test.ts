// The TCP proxy of the failover tests, against a small echo server: it forwards, drops every connection at
// a failover, refuses new ones while down, and forwards again after.
import net from 'node:net'
import { afterEach, expect, it } from 'vitest'
import { startTcpProxy, type TcpProxy } from '../src/index.ts'

const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

async function echoServer(): Promise<number> {
  const server = net.createServer((socket) => socket.on('error', () => {}).pipe(socket))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  closers.push(() => new Promise((resolve) => server.close(() => resolve())))
  return (server.address() as net.AddressInfo).port
}

/** Connects through the proxy; resolves with the socket once connected, or with the error that ended it first. */
function connect(proxy: TcpProxy): Promise<net.Socket> {
  const { port } = new URL(proxy.url)
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1')
    socket.once('connect', () => resolve(socket)).once('error', reject)
  })
}

/** Sends `text` and resolves with what comes back, or rejects when the connection ends first. */
function echo(socket: net.Socket, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = ''
    socket.on('data', (chunk) => {
      got += chunk
      if (got.length >= text.length) resolve(got)
    })
    socket.once('error', reject).once('close', () => reject(new Error('closed')))
    socket.write(text)
  })
}

it('forwards, drops every connection at a failover, refuses new ones while down, then forwards again', async () => {
  const port = await echoServer()
  const proxy = await startTcpProxy(`postgres://gk:secret@127.0.0.1:${port}/db?x=1`)
  closers.unshift(() => proxy.close())
  expect(proxy.url).toMatch(/^postgres:\/\/gk:secret@127\.0\.0\.1:\d+\/db\?x=1$/)
  expect(new URL(proxy.url).port).not.toBe(String(port))

  const first = await connect(proxy)
  expect(await echo(first, 'one')).toBe('one')
  expect(proxy.open).toBe(1)
  const ended = new Promise<string>((resolve) => first.once('error', (error) => resolve((error as NodeJS.ErrnoException).code ?? error.message)))

  const failover = proxy.failover(300)
  expect(await ended).toBe('ECONNRESET')
  // While down, a new connection is reset as it arrives.
  const during = await connect(proxy).then((socket) => echo(socket, 'x')).then(() => 'answered', (error) => error.code ?? error.message)
  expect(during).toMatch(/ECONNRESET|closed/)
  expect(await failover).toEqual({ dropped: 1, refused: 1 })

  const after = await connect(proxy)
  expect(await echo(after, 'two')).toBe('two')
  expect(proxy.forwarded).toBe(2)
  after.destroy()
})
