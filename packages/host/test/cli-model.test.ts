// The switch from the offline scripted model to a real one by exporting a key, against a local
// OpenAI-compatible server: what the progress line says, and that the key stays out of every output.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, compositionYml, run, sessionIdOf, useProject } from '@goalkeeper/test-kit'

const project = useProject()
const KEY = 'sk-test-5b1e0c7d9a'

interface Server {
  url: string
  port: number
  /** The Authorization header of each request, in order. */
  auth: string[]
  close(): Promise<void>
}

/**
 * A chat-completions server: a prompt containing "REFUSE-ME" gets a 401 whose message quotes the key it was
 * given (as some servers do); anything else gets a streamed answer.
 */
async function startServer(): Promise<Server> {
  const auth: string[] = []
  const server = http.createServer((request, response) => {
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      const header = request.headers.authorization ?? ''
      auth.push(header)
      if (body.includes('REFUSE-ME')) {
        response.writeHead(401, { 'content-type': 'application/json' })
        return void response.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${header.slice('Bearer '.length)}` } }))
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      const frame = (delta: object, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
      response.end(frame({ role: 'assistant', content: 'Hello from the local model.' }) + frame({}, 'stop') + 'data: [DONE]\n\n')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    auth,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

describe('goalkeeper on a real model provider', { timeout: CLI_TIMEOUT }, () => {
  it('DEEPSEEK_API_KEY switches to the provider, the note says where and why, and the key reaches no output or session file', async () => {
    const server = await startServer()
    servers.push(server)
    const p = await project({ script: 'export default many(() => ({ text: "offline answer" }))' })
    // The default composition's deepseek entry, pointed at the local server.
    await writeFile(p.yml, `${compositionYml(p)}- id: deepseek\n  name: '@goalkeeper/model-openai'\n  config: { preset: deepseek, baseUrl: '${server.url}', maxRetries: 0 }\n`)
    const env = { DEEPSEEK_API_KEY: KEY }

    const [offline, answered, refused] = await Promise.all([
      run([...p.globals, 'run', 'hello']),
      run([...p.globals, 'run', 'hello'], { env }),
      run([...p.globals, 'run', 'REFUSE-ME please'], { env }),
    ])
    expect(offline.code, offline.stderr).toBe(0)
    expect(offline.stdout).toBe('offline answer\n')
    expect(offline.stderr).toContain('goalkeeper: model scripted (offline; export DEEPSEEK_API_KEY or OPENAI_API_KEY to switch to a real model')

    expect(answered.code, answered.stderr).toBe(0)
    expect(answered.stdout).toBe('Hello from the local model.\n')
    expect(answered.stderr).toContain(`goalkeeper: model deepseek (a real model provider at 127.0.0.1:${server.port}, because DEEPSEEK_API_KEY is set; without it the offline scripted model answers)\n`)
    expect(server.auth).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`])

    expect(refused.code).toBe(70)
    expect(refused.stderr).toMatch(/\nerror in turn 1: AUTH: /)

    const files = (await readdir(p.sessions)).filter((name) => name.endsWith('.jsonl'))
    const sessions = await Promise.all(files.map((name) => readFile(path.join(p.sessions, name), 'utf8')))
    expect(files.sort()).toEqual([offline, answered, refused].map((result) => `${sessionIdOf(result.stderr)}.jsonl`).sort())
    for (const text of [answered.stdout, answered.stderr, refused.stdout, refused.stderr, ...sessions]) expect(text).not.toContain(KEY)
  })

  it('a wait before a retry is a progress line, and a `retry` event with --json', async () => {
    // Every odd request gets a 429 asking for 300 ms, every even one the answer.
    let requests = 0
    const server = http.createServer((request, response) => {
      request.resume()
      request.on('end', () => {
        if (requests++ % 2 === 0) {
          response.writeHead(429, { 'content-type': 'application/json', 'retry-after-ms': '300' })
          return void response.end(JSON.stringify({ error: { message: 'Rate limit reached for requests', code: 'rate_limit_exceeded' } }))
        }
        response.writeHead(200, { 'content-type': 'text/event-stream' })
        response.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'after the wait' }, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`)
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    servers.push({ url: '', port: 0, auth: [], close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }) })
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
    const p = await project({ script: 'export default many(() => ({ text: "offline answer" }))' })
    await writeFile(p.yml, `${compositionYml(p)}- id: deepseek\n  name: '@goalkeeper/model-openai'\n  config: { preset: deepseek, baseUrl: '${url}', maxRetries: 2 }\n`)
    const env = { DEEPSEEK_API_KEY: KEY }
    const text = await run([...p.globals, 'run', 'hello'], { env })
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toBe('after the wait\n')
    expect(text.stderr).toContain('\n  waiting 0.3 s before retry 1 of 2 (deepseek): RATE_LIMIT: deepseek: HTTP 429: Rate limit reached for requests | rate_limit_exceeded\n')
    const json = await run([...p.globals, '--json', 'run', 'hello'], { env })
    const retry = json.stdout.trim().split('\n').map((line) => JSON.parse(line)).find((line) => line.type === 'retry')
    expect(retry).toMatchObject({ provider: 'deepseek', attempt: 1, of: 2, waitMs: 300, error: { code: 'RATE_LIMIT' } })
  })
})
