import { afterEach, describe, expect, it } from 'vitest'
import { createHmac, randomBytes } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { readSession, run, sessionIdOf, useProject } from '@goalkeeper/test-kit'

const project = useProject()
const NOTIFIER = "- id: notifier\n  name: '@goalkeeper/notifier'\n"
const completes = 'export default many((request) => completeGoal(request))'

interface Hit {
  headers: http.IncomingHttpHeaders
  raw: string
}

let server: http.Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined))
  server = undefined
})

/** A webhook receiver on 127.0.0.1 that answers 204 and keeps what it got. */
async function receiver(): Promise<{ url: string; hits: Hit[] }> {
  const hits: Hit[] = []
  server = http.createServer((request, response) => {
    let raw = ''
    request.on('data', (chunk) => (raw += chunk))
    request.on('end', () => {
      hits.push({ headers: request.headers, raw })
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/goal-events`, hits }
}

// The verification recipe of the notifier README.
function verified(secret: string, hit: Hit): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
  const expected = createHmac('sha256', key).update(`${hit.headers['webhook-id']}.${hit.headers['webhook-timestamp']}.${hit.raw}`).digest('base64')
  return String(hit.headers['webhook-signature']).split(' ').includes(`v1,${expected}`)
}

describe('goalkeeper goal --notify', { timeout: 60_000 }, () => {
  it('POSTs the completion to the URL, signed with GOALKEEPER_WEBHOOK_SECRET, before the command exits; the session logs the delivery', async () => {
    const hook = await receiver()
    const p = await project({ script: completes, extraYml: NOTIFIER })
    const secret = `whsec_${randomBytes(24).toString('base64')}`
    const done = await run([...p.globals, 'goal', 'Write the report', '--notify', hook.url], { env: { GOALKEEPER_WEBHOOK_SECRET: secret } })
    expect(done.code, done.stderr).toBe(0)
    expect(done.stderr).not.toContain('unsigned')
    expect(hook.hits).toHaveLength(1)
    expect(verified(secret, hook.hits[0]!)).toBe(true)
    const id = sessionIdOf(done.stderr)
    expect(JSON.parse(hook.hits[0]!.raw)).toMatchObject({ type: 'goal.completed', data: { session: id, goal: { objective: 'Write the report', phase: 'complete' } } })
    const records = await readSession(p, id)
    expect(records.filter((r) => r.type === 'notify/delivery').map((r) => r.data)).toMatchObject([{ type: 'goal.completed', url: hook.url, attempt: 1, status: 204, outcome: 'delivered' }])
    expect(JSON.stringify(records)).not.toContain(secret.slice('whsec_'.length))
  })

  it('without the secret it sends unsigned and warns; without the notifier plugin it refuses to start', async () => {
    const hook = await receiver()
    const p = await project({ script: completes, extraYml: NOTIFIER })
    const unsigned = await run([...p.globals, 'goal', 'Write the report', '--notify', hook.url], { env: { GOALKEEPER_WEBHOOK_SECRET: undefined } })
    expect(unsigned.code, unsigned.stderr).toBe(0)
    expect(unsigned.stderr).toContain('warning: --notify sends unsigned webhooks; set GOALKEEPER_WEBHOOK_SECRET')
    expect(hook.hits.map((hit) => [JSON.parse(hit.raw).type, hit.headers['webhook-signature']])).toEqual([['goal.completed', undefined]])

    const bare = await project({ script: completes })
    const refused = await run([...bare.globals, 'goal', 'Write the report', '--notify', hook.url])
    expect(refused.code, refused.stderr).toBe(64)
    expect(refused.stderr).toContain('--notify needs the notifier plugin')
    expect(hook.hits).toHaveLength(1)
  })
})
