import { createHmac, timingSafeEqual } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'

/** How the receiver answers one request: a status (with headers), or never (the sender's timeout ends it). */
export type Answer = number | { status: number; headers?: Record<string, string> } | 'hang'

export interface Received {
  id: string
  timestamp: number
  signature: string | undefined
  /** The signature checks out against the receiver's secret (false when unsigned). */
  verified: boolean
  body: { type: string; timestamp: string; data: Record<string, any> }
  raw: string
}

export interface Receiver {
  url: string
  received: Received[]
  /** Resolves once `count` requests arrived (each answered or hanging). */
  until(count: number): Promise<Received[]>
  close(): Promise<void>
}

/** The Standard Webhooks check, written from the spec: HMAC-SHA256 of `id.timestamp.body`, any `v1,` entry may match. */
export function verify(secret: string, id: string, timestamp: string, body: string, header: string | undefined): boolean {
  if (!header) return false
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret)
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest()
  return header.split(' ').some((entry) => {
    const [version, value] = entry.split(',')
    const given = Buffer.from(value ?? '', 'base64')
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected)
  })
}

/** A webhook receiver on 127.0.0.1: request i gets `answers[i]` (the last one repeats). */
export async function startReceiver(secret: string | undefined, answers: Answer[] = [200]): Promise<Receiver> {
  const received: Received[] = []
  const waiters: { count: number; resolve: (list: Received[]) => void }[] = []
  const hanging: http.ServerResponse[] = []
  const server = http.createServer((request, response) => {
    let raw = ''
    request.setEncoding('utf8')
    request.on('data', (chunk) => (raw += chunk))
    request.on('end', () => {
      const header = (name: string) => request.headers[name] as string | undefined
      const id = header('webhook-id') ?? ''
      const timestamp = header('webhook-timestamp') ?? ''
      const signature = header('webhook-signature')
      received.push({ id, timestamp: Number(timestamp), signature, verified: !!secret && verify(secret, id, timestamp, raw, signature), body: JSON.parse(raw), raw })
      const answer = answers[Math.min(received.length - 1, answers.length - 1)]!
      if (answer === 'hang') hanging.push(response)
      else if (typeof answer === 'number') response.writeHead(answer).end()
      else response.writeHead(answer.status, answer.headers).end()
      for (const waiter of waiters.filter((item) => received.length >= item.count)) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve(received.slice())
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    until: (count) => new Promise((resolve) => (received.length >= count ? resolve(received.slice()) : waiters.push({ count, resolve }))),
    close: async () => {
      for (const response of hanging) response.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
