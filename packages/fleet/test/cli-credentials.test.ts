// Push credentials come from ${VAR} in the fleet entry, reach git through GIT_ASKPASS (never an argument
// or a URL) and are masked wherever a worker reports what git said.
import { createServer, type Server } from 'node:http'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { CLI_TIMEOUT } from '@goalkeeper/test-kit'
import { listQueue, submit, useFleet, worker } from './helpers.ts'

const TOKEN = 'gk-push-token-5f1e2d3c4b5a6978'
const seen: string[] = []
let server: Server
let port = 0

// A git HTTP server that asks for credentials and refuses whatever comes.
beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push(request.headers.authorization ?? '')
    response.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' }).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as { port: number }).port
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const fleet = useFleet({ git: { remote: 'http://127.0.0.1:${FLEET_TEST_PORT}/team/repo.git', username: 'bot', password: '${GIT_PUSH_TOKEN}' } })

it('hands the push credentials to git through askpass and masks them in every report', async () => {
  const repo = await fleet.repo('pushed')
  const id = await submit(fleet, 'Write result.txt for goal-3', repo)
  const one = worker(fleet, ['--name', 'w-cred'], { GIT_PUSH_TOKEN: TOKEN, FLEET_TEST_PORT: String(port) })
  await one.waitFor('stderr', new RegExp(`goal ${id} failed: `))
  one.child.kill('SIGTERM')
  await one.exit
  // git asked, askpass answered with the configured user and the token from the environment.
  expect(seen).toContain(`Basic ${Buffer.from(`bot:${TOKEN}`).toString('base64')}`)
  expect(one.stderr()).toMatch(new RegExp(`goal ${id} failed: git ls-remote failed: Authentication failed for 'http://127.0.0.1:${port}/team/repo.git/'`))
  const [goal] = (await listQueue(fleet)).filter((item) => item.id === id)
  expect(goal.state).toBe('failed')
  for (const text of [one.stderr(), one.stdout(), JSON.stringify(goal)]) {
    expect(text).not.toContain(TOKEN)
    expect(text).not.toContain(Buffer.from(`bot:${TOKEN}`).toString('base64'))
  }
}, CLI_TIMEOUT)
