// Budgets on a real (local) OpenAI-compatible model: the CLI as a child process, the HTTP provider talking
// to a local server. Only the server's answers are scripted.
import { describe, expect, it } from 'vitest'
import { delta, frame, sse, usageFrame, useOpenAIServers, type Handler, type OpenAIServer } from '@goalkeeper/test-kit'
import { CLI_TIMEOUT, hint, localModelProject, readSession, run, sessionIdOf, start, useProject, type Project } from '@goalkeeper/test-kit'

const project = useProject()
const serve = useOpenAIServers()

const answer = (text: string, usage: { prompt_tokens: number; completion_tokens: number }): Handler =>
  sse(delta({ role: 'assistant', content: text }), delta({}, 'stop'), usageFrame(usage), frame('[DONE]'))

/** A project whose agents talk to a `local` entry (custom preset, model m1) served by `handlers`. */
async function remoteProject(handlers: Handler[], prices?: Record<string, unknown>): Promise<{ p: Project; server: OpenAIServer }> {
  const server = await serve(handlers)
  const p = await project(localModelProject(server.url, prices ? { config: { 'goal-budget': { prices } } } : {}))
  return { p, server }
}

describe('goalkeeper goal with a cost budget on a remote model', { timeout: CLI_TIMEOUT }, () => {
  it('refuses a cost budget on a model without a known price (exit 64, the prices key named) before any call; once priced it runs', async () => {
    const { p, server } = await remoteProject([answer('Round done.', { prompt_tokens: 100, completion_tokens: 10 })])
    const refused = await run([...p.globals, 'goal', 'Write the report', '--cost-budget', '2.50'])
    expect(refused.code, refused.stderr).toBe(64)
    expect(refused.stderr).toContain('the cost budget ($2.50) cannot be kept: model local/m1 has no known price')
    expect(refused.stderr).toContain('  prices:\n    local/m1: { input: 0.5, output: 1.5 }')
    expect(server.received).toHaveLength(0)

    // The same project directory, now with the price set.
    const priced = await remoteProject([answer('Round done.', { prompt_tokens: 100, completion_tokens: 10 })], { 'local/m1': { input: 0.5, output: 1.5 } })
    const accepted = await run([...priced.p.globals, 'goal', 'Write the report', '--cost-budget', '2.50', '--max-rounds', '1'])
    expect(accepted.code, accepted.stderr).toBe(4)
    expect(priced.server.received).toHaveLength(1)
    expect(accepted.stdout).toContain('Spent: tokens 110, cost $0.0001/$2.50\n')

    // The price removed again: resuming that goal (its cost budget kept) is refused the same way.
    const unpriced = await remoteProject([answer('unused', { prompt_tokens: 1, completion_tokens: 1 })])
    const resumed = await run([...unpriced.p.globals, 'goal', '--session', sessionIdOf(accepted.stderr), '--max-rounds', '3'])
    expect(resumed.code, resumed.stderr).toBe(64)
    expect(resumed.stderr).toContain('the cost budget ($2.50) cannot be kept: model local/m1 has no known price')
    expect(unpriced.server.received).toHaveLength(0)
  })

  it('chat refuses /goal --cost-budget and /goal budget --cost-budget on an unpriced model, naming the key; a token budget is fine', async () => {
    const { p, server } = await remoteProject([answer('Round done.', { prompt_tokens: 100, completion_tokens: 10 })])
    const chat = start([...p.globals, 'chat'], { stdin: 'pipe' })
    chat.type('/goal --cost-budget 2.5 Write the report')
    await chat.waitFor('stderr', /the cost budget \(\$2\.50\) cannot be kept: model local\/m1 has no known price; set its price .*\n {2}prices:\n {4}local\/m1: \{ input: 0\.5, output: 1\.5 \}\n/)
    chat.type('/goal --max-rounds 1 --token-budget 5000 Write the report')
    await chat.waitFor('stdout', /^Goal set\./m)
    chat.type('/goal budget --cost-budget 3')
    await chat.waitFor('stderr', /the cost budget \(\$3\.00\) cannot be kept: model local\/m1/)
    chat.child.stdin!.end()
    expect(await chat.exited()).toBe(4)
    const records = await readSession(p, sessionIdOf(chat.stderr()))
    const changes = records.filter((r) => r.type === 'goal/change').map((r) => r.data)
    expect(changes.map((change) => change.op)).toEqual(['create', 'block'])
    expect(changes[0].goal.budgets).toEqual({ tokens: 5000 })
    expect(server.received).toHaveLength(1)
  })

  it('two budgets used up by one call: the printed command raises both (cost rounded up to the cent) and, run verbatim, resumes the goal', async () => {
    // 1000 input and 250 output tokens at $2 and $8 per million: $0.004 and 1250 tokens for round 1.
    const { p, server } = await remoteProject(
      [answer('Round one.', { prompt_tokens: 1000, completion_tokens: 250 }), answer('Round two.', { prompt_tokens: 10, completion_tokens: 5 })],
      { 'local/m1': { input: 2, output: 8 } },
    )
    const first = await run([...p.globals, 'goal', 'Write the report', '--token-budget', '1000', '--cost-budget', '0.004', '--max-rounds', '2'])
    expect(first.code, first.stderr).toBe(5)
    const id = sessionIdOf(first.stderr)
    const raise = `${hint(p)} goal --session ${id} --token-budget 2250 --cost-budget 0.01`
    expect(first.stderr).toContain(`to raise the budget and resume the goal: ${raise}\n`)
    expect(first.stdout).toContain('Spent: tokens 1.3k/1k, cost $0.0040/$0.004\n')

    // The hint, word for word (paths hold no spaces here), as a person would paste it.
    const [program, ...args] = raise.split(' ')
    expect(program).toBe('goalkeeper')
    const second = await run(args)
    expect(second.code, second.stderr).toBe(4)
    expect(server.received).toHaveLength(2)
    const records = await readSession(p, id)
    expect(records.filter((r) => r.type === 'goal/change').map((r) => r.data.op)).toEqual(['create', 'block', 'edit', 'resume', 'block'])
    expect(records.filter((r) => r.type === 'goal/change').at(-1)!.data.goal).toMatchObject({
      budgets: { tokens: 2250, costUsd: 0.01 }, blockedReason: { code: 'round-limit' },
    })
  })
})
