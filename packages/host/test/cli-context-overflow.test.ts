// A server whose real limit is far below the window the provider reports (128000 for the deepseek preset):
// its refusals as too long are evidence, so the history is compacted under them and the goal goes on, or,
// at the third refusal, the goal blocks `context-overflow` (exit 2). Real provider, real local server.
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { OVERFLOW_BODIES, startChatServer, type ChatAnswer, type ChatRequest, type ChatServer } from '@goalkeeper/test-kit'
import { CLI_TIMEOUT, compositionYml, jsonLines, readSession, run, sessionIdOf, useProject, type Project } from '@goalkeeper/test-kit'

const project = useProject()
const KEY = 'sk-test-overflow-0c7d9a'
const env = { DEEPSEEK_API_KEY: KEY }
const SUMMARY_SYSTEM = 'You write the working summary'
const body = (server: string) => OVERFLOW_BODIES.find((entry) => entry.server === server)!

const servers: ChatServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

/** The messages of the current goal round after its prompt. */
function roundTail(request: ChatRequest) {
  const start = request.messages.findLastIndex((message) => message.role === 'user' && String(message.content).startsWith('<goal_round>'))
  return request.messages.slice(start + 1)
}

/** A goal round: read big.txt, read the goal, complete it, say so. */
function roundStep(request: ChatRequest): ChatAnswer {
  const results = roundTail(request).filter((message) => message.role === 'tool')
  if (results.length === 0) return { text: 'Reading the file.', toolCalls: [{ name: 'read_file', arguments: { path: 'big.txt' } }] }
  if (results.length === 1) return { text: 'Checking the goal.', toolCalls: [{ name: 'get_goal', arguments: {} }] }
  if (results.length === 2) {
    const { goal } = JSON.parse(String(results[1].content))
    return { text: 'Completing.', toolCalls: [{ name: 'update_goal', arguments: { goal_id: goal.goal_id, revision: goal.revision, action: 'complete' } }] }
  }
  return { text: 'Goal done.' }
}

const isSummaryCall = (request: ChatRequest) => String(request.messages[0]?.content ?? '').startsWith(SUMMARY_SYSTEM)

async function setup(answer: (request: ChatRequest, chars: number) => ChatAnswer): Promise<{ p: Project; server: ChatServer }> {
  const server = await startChatServer(answer)
  servers.push(server)
  const p = await project({ script: 'export default many(() => ({ text: "offline answer" }))' })
  await writeFile(path.join(p.workspace, 'big.txt'), 'a line of the large file that the server cannot take whole\n'.repeat(500))
  await writeFile(p.yml, `${compositionYml(p)}- id: deepseek\n  name: '@goalkeeper/model-openai'\n  config: { preset: deepseek, baseUrl: '${server.url}', maxRetries: 0 }\n`)
  return { p, server }
}

describe('a refusal as too long under a large configured window', { timeout: CLI_TIMEOUT }, () => {
  it('is compacted under and retried, the goal goes on to complete, and the compaction is shown', async () => {
    // The real limit: whatever is 20000 characters larger than the first request (the file is 30000).
    let first = 0
    const { p, server } = await setup((request, chars) => {
      if (isSummaryCall(request)) return { text: 'Read big.txt.' }
      first ||= chars
      const refusal = body('OpenAI (configured limit)')
      return chars > first + 20_000 ? { status: refusal.status, body: refusal.body } : roundStep(request)
    })
    const result = await run([...p.globals, 'goal', 'Read the big file and finish', '--max-rounds', '2'], { env })
    expect(result.code, result.stderr).toBe(0)
    const statuses = server.requests.map((request) => request.status)
    expect(statuses.filter((status) => status === 400)).toHaveLength(1)
    expect(statuses.at(-1)).toBe(200)
    expect(result.stderr).toMatch(/\n {2}compacted: 1 tool output, ~\d+(\.\d)?k -> \d+(\.\d)?k tokens of \d+(\.\d)?k \(fallback\) after the model refused the request as too long\n/)

    const json = await run([...p.globals, '--json', 'goal', 'Read the big file and finish', '--max-rounds', '2'], { env })
    expect(json.code, json.stderr).toBe(0)
    const compacted = jsonLines(json.stdout).filter((line) => line.type === 'compaction')
    expect(compacted).toEqual([expect.objectContaining({ reason: 'overflow', method: 'fallback', elided: 1, replaced: 0 })])
    // The window is what the refusal taught: the server's limit scaled by its count against the loop's estimate.
    const { limit, counted } = { limit: 272_000, counted: 290_353 }
    expect(compacted[0].contextWindow).toBe(Math.floor(limit * compacted[0].tokensBefore / counted))
    expect(compacted[0].tokensAfter).toBeLessThanOrEqual(compacted[0].contextWindow / 2)
  })

  it('blocks the goal context-overflow (exit 2) at the third refusal, after a summary and the fallback, saying what was tried and what to change', async () => {
    // Round 1 reads a file and ends; from round 2 on every request is refused, with Ollama's wording (no figures).
    const { p, server } = await setup((request) => {
      if (isSummaryCall(request)) return { text: `What was done: round 1 read big.txt. ${'It holds the same line repeated. '.repeat(12)}` }
      const round2 = request.messages.some((message) => String(message.content).includes('Round: 2/'))
      const refusal = body('Ollama (OpenAI-compatible endpoint)')
      if (round2) return { status: refusal.status, body: refusal.body }
      return roundTail(request).some((message) => message.role === 'tool') ? { text: 'Round 1 read the file; more to do.' } : roundStep(request)
    })
    const result = await run([...p.globals, 'goal', 'Read the big file and finish', '--max-rounds', '3'], { env })
    expect(result.code, result.stderr).toBe(2)
    const work = server.requests.filter((request) => !isSummaryCall(request.body)).map((request) => request.status)
    expect(work).toEqual([200, 200, 400, 400, 400])
    expect(server.requests.filter((request) => isSummaryCall(request.body))).toHaveLength(1)
    expect(result.stderr).toMatch(/\nround 2\/3\n {2}compacted: \d+ messages, .* \(summary\) after the model refused the request as too long\n {2}compacted: \d+ messages?, .* \(fallback\) after the model refused the request as too long\n/)
    expect(result.stderr).toContain('\ngoal blocked after round 2/3: context-overflow: The model refused goal round 2 as too long even after the history was compacted')
    const records = await readSession(p, sessionIdOf(result.stderr))
    const blocked = records.filter((record) => record.type === 'goal/change').at(-1)!.data.goal
    expect(blocked.blockedReason.code).toBe('context-overflow')
    expect(blocked.blockedReason.message).toMatch(/^The model refused goal round 2 as too long even after the history was compacted \(CONTEXT_OVERFLOW: the model refused the request as too long 3 times; compacted \(summary\) from about \d+ to \d+ estimated tokens, then compacted \(fallback\) from about \d+ to \d+ estimated tokens \(aiming under about \d+ estimated tokens\)\. Last refusal: deepseek: HTTP 400: the input length exceeds the context length \| invalid_request_error\)\. Set the provider's contextWindow/)
    for (const record of records) expect(JSON.stringify(record)).not.toContain(KEY)
  })
})
