// A goal run end to end through the CLI on Claude: the anthropic provider pointed at a local server that
// replays recorded Messages API streams (packages/model-anthropic/test/fixtures).
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { error, startReplayServer, stream, thinkingBlocksOf, type ReplayServer } from '@goalkeeper/test-kit'
import { CLI_TIMEOUT, compositionYml, readSession, run, sessionIdOf, useProject } from '@goalkeeper/test-kit'

const project = useProject()
const KEY = 'sk-ant-cli-7c6b5a4d3e2f1SECRET'
const servers: ReplayServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

/** The goal id and revision of the last get_goal result the request carries back, for the update_goal template. */
const goalOf = (received: { body: any }) => {
  const results = received.body.messages.flatMap((message: any) => message.content).filter((block: any) => block.type === 'tool_result')
  const goal = JSON.parse(results.at(-1).content).goal
  return { GOAL_ID: goal.goal_id, REVISION: String(goal.revision) }
}

describe('goalkeeper goal on the anthropic provider', { timeout: CLI_TIMEOUT }, () => {
  it('pursues a goal to completion on recorded Claude streams, sends the signed thinking back, prices the cache, keeps the key out', async () => {
    const server = await startReplayServer([stream('goal-get.sse'), stream('goal-complete.sse', goalOf), stream('goal-done.sse')])
    servers.push(server)
    const p = await project({ script: 'export default many(() => ({ text: "offline answer" }))' })
    await writeFile(p.yml, `${compositionYml(p)}- id: anthropic\n  name: '@goalkeeper/model-anthropic'\n  config: { maxRetries: 0 }\n`)
    const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url }

    const result = await run([...p.globals, '--show-reasoning', 'goal', 'Write the notes', '--max-rounds', '3'], { env })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe('Goal done: the notes are in place.\nGoal complete (not verified) after 1/3 rounds: "Write the notes"\nSpent: tokens 5.2k, cost $0.0206\n')
    expect(result.stderr).toContain(`goalkeeper: model anthropic (a real model provider at 127.0.0.1:${server.port}, because ANTHROPIC_API_KEY is set`)
    expect(result.stderr).toContain('A goal round: read the goal first.')

    expect(server.messages).toHaveLength(3)
    const [first] = thinkingBlocksOf('goal-get.sse')
    const [second] = thinkingBlocksOf('goal-complete.sse')
    expect(server.messages[1].raw).toContain(JSON.stringify(first))
    expect(server.messages[2].raw).toContain(JSON.stringify(first))
    expect(server.messages[2].raw).toContain(JSON.stringify(second))
    for (const received of server.messages) expect(received.body.system.at(-1).cache_control).toEqual({ type: 'ephemeral' })

    const id = sessionIdOf(result.stderr)
    const records = await readSession(p, id)
    expect(records.filter((record) => record.type === 'goal/change').map((record) => record.data.op)).toEqual(['create', 'complete'])
    const usage = records.filter((record) => record.type === 'goal/usage').map((record) => record.data)
    // Codex tokens (input - cache reads + output) and the price of claude-sonnet-4-6: $3/M input, $3.75/M cache
    // writes, $0.30/M cache reads, $15/M output.
    expect(usage.map((entry: any) => entry.tokens)).toEqual([2410 + 2380 + 58, 160 + 71, 120 + 12])
    expect(usage[0].costUsd).toBeCloseTo((2410 * 3 + 2380 * 3.75 + 58 * 15) / 1e6, 9)
    expect(usage[1].costUsd).toBeCloseTo((160 * 3 + 2380 * 0.3 + 71 * 15) / 1e6, 9)

    const sessions = await Promise.all((await readdir(p.sessions)).map((name) => readFile(path.join(p.sessions, name), 'utf8')))
    for (const text of [result.stdout, result.stderr, ...sessions]) expect(text).not.toContain(KEY)
  })

  it('check shows the provider; --model anthropic/<id> names the model of every request; a refused key ends the run with one line naming the variable', async () => {
    const server = await startReplayServer([stream('text.sse')])
    servers.push(server)
    const p = await project({ script: 'export default many(() => ({ text: "offline answer" }))' })
    await writeFile(p.yml, `${compositionYml(p)}- id: anthropic\n  name: '@goalkeeper/model-anthropic'\n  config: { maxRetries: 0 }\n`)
    const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url }
    const [result, checked] = await Promise.all([
      run([...p.globals, '--model', 'anthropic/claude-haiku-4-5', 'run', 'hello'], { env }),
      run([...p.globals, 'check'], { env }),
    ])
    expect(checked.code, checked.stderr).toBe(0)
    expect(checked.stdout).toMatch(/\n {2}loaded +anthropic +@goalkeeper\/model-anthropic\n/)
    expect(checked.stdout).toContain(`model anthropic (a real model provider at 127.0.0.1:${server.port}, because ANTHROPIC_API_KEY is set`)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe('Hello from Claude.\n')
    expect(server.messages[0].body).toMatchObject({ model: 'claude-haiku-4-5', max_tokens: 64000 })

    const refusing = await startReplayServer([error(401, 'authentication-401.json')])
    servers.push(refusing)
    const refused = await run([...p.globals, 'run', 'hello'], { env: { ...env, ANTHROPIC_BASE_URL: refusing.url } })
    expect(refused.code).toBe(70)
    expect(refused.stderr).toContain('\nerror in turn 1: AUTH: anthropic: the API key was refused (HTTP 401: invalid x-api-key); check ANTHROPIC_API_KEY')
    expect(refused.stderr + refused.stdout).not.toContain(KEY)
  })
})
