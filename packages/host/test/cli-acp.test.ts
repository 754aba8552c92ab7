// `goalkeeper acp` as an editor runs it: a child process spoken to through the ACP SDK's client over its
// stdin and stdout, on the repository's own cordis.yml and offline demo model.
import { cp, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import * as acp from '@agentclientprotocol/sdk'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, readSession, repoRoot, run, start, useProject, type Run } from '@goalkeeper/test-kit'

const project = useProject()
const OBJECTIVE = 'Create NOTES.md in the workspace with a summary of every file in it'

/** The child's stdout and stdin as the ACP SDK's stream. */
function childStream(child: Run) {
  const output = new ReadableStream<Uint8Array>({
    start(controller) {
      // The client may have stopped reading (closed its connection) before the child's stdout ends.
      child.child.stdout!.on('data', (chunk: Buffer) => { try { controller.enqueue(new Uint8Array(chunk)) } catch {} })
      child.child.stdout!.on('end', () => { try { controller.close() } catch {} })
    },
  })
  const input = new WritableStream<Uint8Array>({
    write: (chunk) => new Promise<void>((resolve) => void child.child.stdin!.write(chunk, () => resolve())),
    close: () => void child.child.stdin!.end(),
  })
  return acp.ndJsonStream(input, output)
}

/** An ACP client on the child's stdin and stdout; the person at it never answers a permission question. */
function connectSilent(child: Run) {
  const asked: unknown[] = []
  const connection = acp.client({ name: 'test' })
    .onRequest('session/request_permission', ({ params }) => {
      asked.push(params)
      return new Promise<acp.RequestPermissionResponse>(() => {})
    })
    .connect(childStream(child))
  return { connection, asked }
}

/** One session, one prompt that ends its turn, then the editor leaves: the command must end with 0. Returns the session id. */
async function promptOnce(child: Run, connection: acp.ClientConnection, cwd: string, text: string): Promise<string> {
  await connection.agent.request('initialize', { protocolVersion: acp.PROTOCOL_VERSION })
  const { sessionId } = await connection.agent.request('session/new', { cwd, mcpServers: [] })
  expect(await connection.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })).toEqual({ stopReason: 'end_turn' })
  connection.close()
  child.child.stdin!.end()
  expect(await child.exit, child.stderr()).toBe(0)
  return sessionId
}

describe('goalkeeper acp', { timeout: CLI_TIMEOUT }, () => {
  it('serves the demo goal to an ACP client over stdio until it is complete; stdout carries only JSON-RPC', async () => {
    const p = await project({ script: 'export default []' })
    await cp(path.join(repoRoot, 'demo/workspace'), p.workspace, { recursive: true })
    const child = start(['--config', path.join(repoRoot, 'cordis.yml'), 'acp'], { stdin: 'pipe', env: { GOALKEEPER_SESSIONS_DIR: p.sessions } })
    const updates: acp.SessionUpdate[] = []
    const connection = acp.client({ name: 'test' })
      .onNotification('session/update', ({ params }) => void updates.push(params.update))
      .connect(childStream(child))
    const agent = connection.agent

    const hello = await agent.request('initialize', { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} })
    expect(hello.agentInfo).toMatchObject({ name: 'goalkeeper', version: expect.stringMatching(/^\d+\.\d+\.\d+/) })
    const { sessionId } = await agent.request('session/new', { cwd: p.workspace, mcpServers: [] })
    const answer = await agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `/goal --max-rounds 5 ${OBJECTIVE}` }] })
    expect(answer).toEqual({ stopReason: 'end_turn' })

    const plans = updates.filter((update) => update.sessionUpdate === 'plan').map((update: any) => update.entries.map((entry: any) => entry.content))
    expect(plans.at(-1)).toEqual([`Goal, complete: ${OBJECTIVE}`, 'Round 1/5: completed', 'Round 2/5: completed', 'Round 3/5: completed'])
    const titles = updates.filter((update) => update.sessionUpdate === 'tool_call').map((update: any) => update.title)
    expect(titles).toContain('Write NOTES.md')
    expect(titles.at(-1)).toBe('Goal: complete')
    const goal = updates.filter((update) => update.sessionUpdate === 'session_info_update').map((update: any) => update._meta.goal).at(-1)
    expect(goal).toMatchObject({ objective: OBJECTIVE, status: 'complete', roundsStarted: 3, maxRounds: 5 })
    const notes = await readFile(path.join(p.workspace, 'NOTES.md'), 'utf8')
    expect(notes.split('\n').filter((line) => line.startsWith('- ')).length).toBeGreaterThan(0)

    // The editor closes the connection: the command ends in order, with 0.
    connection.close()
    child.child.stdin!.end()
    expect(await child.exit, child.stderr()).toBe(0)
    for (const line of child.stdout().split('\n').filter(Boolean)) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' })
    expect(child.stderr()).not.toMatch(/\[E\]|error/i)
  })

  it('keeps stdout for JSON-RPC when a plugin prints to it', async () => {
    const p = await project({ script: "export default [{ text: 'hello from the model' }]", extraYml: "- id: noisy\n  name: ./noisy.mjs\n" })
    await writeFile(path.join(p.dir, 'noisy.mjs'), [
      "export const name = 'noisy'",
      "export const apply = (ctx) => {",
      "  console.log('noisy: loaded')",
      "  ctx.on('agent/turn-start', () => { console.log('noisy: a turn starts'); process.stdout.write('noisy: raw write\\n') })",
      "}",
    ].join('\n'))
    const child = start([...p.globals, 'acp'], { stdin: 'pipe' })
    await promptOnce(child, acp.client({ name: 'test' }).connect(childStream(child)), p.workspace, 'hi')
    for (const line of child.stdout().split('\n').filter(Boolean)) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' })
    expect(child.stderr()).toContain('noisy: loaded\nnoisy: a turn starts\nnoisy: raw write\n')
  })

  it('refuses a composition that does not load, on stderr, with exit 64', async () => {
    const p = await project({ script: 'export default []', config: { 'loop-guard': { softThreshold: 'lots' } } })
    const child = start([...p.globals, 'acp'], { stdin: 'pipe' })
    expect(await child.exit).toBe(64)
    expect(child.stdout()).toBe('')
    expect(child.stderr()).toMatch(/entry "loop-guard"/)
  })

  it('--permission-timeout (or GOALKEEPER_PERMISSION_TIMEOUT) is how long an unanswered question waits before the call is denied', async () => {
    const script = "export default [{ toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }] }, { text: 'tried' }]"
    const p = await project({ script, extraYml: "- id: permissions\n  name: '@goalkeeper/permissions'\n  config: { mode: read-only }\n" })
    const ask = async (args: string[], env: Record<string, string> = {}) => {
      const child = start([...p.globals, 'acp', ...args], { stdin: 'pipe', env })
      const { connection, asked } = connectSilent(child)
      const sessionId = await promptOnce(child, connection, p.workspace, 'write')
      expect(asked).toHaveLength(1)
      const results = (await readSession(p, sessionId)).filter((record) => record.type === 'tool/result')
      return results.map((record) => record.data.denied?.reason)
    }
    expect(await ask(['--permission-timeout', '300ms'])).toEqual(['nobody answered the permission request in the editor within 300 ms; unattended calls are denied'])
    expect(await ask([], { GOALKEEPER_PERMISSION_TIMEOUT: '1s' })).toEqual(['nobody answered the permission request in the editor within 1 s; unattended calls are denied'])
    // The option wins over the variable.
    expect(await ask(['--permission-timeout', '200ms'], { GOALKEEPER_PERMISSION_TIMEOUT: '1h' })).toEqual(['nobody answered the permission request in the editor within 200 ms; unattended calls are denied'])

    const badOption = await run([...p.globals, 'acp', '--permission-timeout', 'soon'])
    expect(badOption.code).toBe(64)
    expect(badOption.stderr).toContain("goalkeeper: option '--permission-timeout <duration>' argument 'soon' is invalid: expected a duration with its unit, such as 90s, 10m or 1h (hint: see goalkeeper acp --help)")
    const badVariable = await run([...p.globals, 'acp'], { env: { GOALKEEPER_PERMISSION_TIMEOUT: '300' } })
    expect(badVariable.code).toBe(64)
    expect(badVariable.stdout).toBe('')
    expect(badVariable.stderr).toContain('GOALKEEPER_PERMISSION_TIMEOUT=300: not a duration (hint: set it to a duration with its unit, such as 90s, 10m or 1h)')
  })
})
