import { beforeEach, describe, expect } from 'vitest'
import type { Context } from 'cordis'
import type { ModelRequest, ScriptResponse, ScriptStep } from '@goalkeeper/model'
import { isRecordOf, turnOutcome, type ContextCompactionData, type SessionRecord } from '@goalkeeper/session'
import { COMPACTION_INSTRUCTION, ELIDED_OUTPUT, SUMMARY_HEADING, estimateRequest, replayHistory, type Agent } from '@goalkeeper/agent-loop'
import { deferred, prompt, type Harness } from '@goalkeeper/test-kit'
import { it } from './helpers.ts'

const WINDOW = 3000
const big = (label: string, chars = 2400) => `${label} ` + 'x'.repeat(chars)
const isSummaryCall = (request: ModelRequest) => request.system === COMPACTION_INSTRUCTION
const compactions = (records: SessionRecord[]) =>
  records.filter((record) => isRecordOf(record, 'context/compacted')).map((record) => record.data as ContextCompactionData)

interface Seen { request: ModelRequest; records: number }

/**
 * A model whose work answers come from `work` (one per non-summary request) and whose summary answers come
 * from `summary`; every request is kept with the number of records the session had when it was made.
 */
function model(h: Harness, agent: () => Agent, work: ScriptResponse[], summary: (request: ModelRequest) => ScriptResponse) {
  const seen: Seen[] = []
  const answer = (request: ModelRequest): ScriptResponse => {
    seen.push({ request, records: h.records(agent()).length })
    return isSummaryCall(request) ? summary(request) : work.shift() ?? { kind: 'error', code: 'INTERNAL', message: 'script exhausted' }
  }
  // One function step per request, summaries included.
  for (let i = 0; i < 64; i++) h.scripted.push(answer)
  return seen
}

/** Steps that each call `bulk` for a large output, then a final answer. */
const echoes = (n = 5): ScriptResponse[] => [
  ...Array.from({ length: n }, (_, i) => ({ text: `step ${i + 1}`, toolCalls: [{ name: 'bulk', arguments: { label: `output ${i + 1}` } }] })),
  { text: 'done' },
]

/** `bulk` returns a large output for a small call, the shape of reading a big file. */
const bulkTool = {
  name: 'bulk-tool',
  inject: ['tools'],
  apply(ctx: Context) {
    ctx.tools.register({
      name: 'bulk',
      description: 'Returns a large text.',
      parameters: { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] },
      execute: (args: { label: string }) => big(args.label),
    })
  },
}

describe('context compaction', () => {
  beforeEach<{ h: Harness }>(async ({ h }) => { await h.load(bulkTool) })

  it('summarises older history once a request passes the threshold, keeping the prompt and recent exchanges', async ({ h }) => {
    h.scripted.setContextWindow(WINDOW)
    let agent!: Agent
    const seen = model(h, () => agent, echoes(), () => ({ text: 'Echoed outputs 1 to 3; nothing remains but the last echoes.', usage: { inputTokens: 900, outputTokens: 20 } }))
    agent = await h.createAgent()
    const observed: ContextCompactionData[] = []
    h.root.on('agent/compacted', (_agent, data) => { observed.push(data) })
    agent.send({ content: 'PROMPT: echo five large texts' })
    await agent.whenIdle()

    const records = h.records(agent)
    expect(turnOutcome(records)).toEqual({ kind: 'completed' })
    const [first, ...others] = compactions(records)
    expect(first).toMatchObject({ reason: 'threshold', method: 'summary', turn: 1, usage: { inputTokens: 900, outputTokens: 20 } })
    expect(first.tokensBefore).toBeGreaterThan(0.8 * WINDOW)
    expect(first.tokensAfter).toBeLessThanOrEqual(0.5 * WINDOW)
    expect(first.summary).toBe(`${SUMMARY_HEADING}\nEchoed outputs 1 to 3; nothing remains but the last echoes.`)
    expect(observed).toEqual([first, ...others])

    const work = seen.filter((entry) => !isSummaryCall(entry.request)).map((entry) => entry.request)
    const summaries = seen.filter((entry) => isSummaryCall(entry.request)).map((entry) => entry.request)
    expect(summaries.length).toBeGreaterThan(0)
    expect(summaries[0].tools).toEqual([])
    expect(summaries[0].messages[0].role === 'user' && summaries[0].messages[0].content[0].text).toContain('PROMPT: echo five large texts')
    for (const request of work) {
      expect(estimateRequest(request)).toBeLessThanOrEqual(0.8 * WINDOW)
      // The prompt that opened the turn is never summarised away.
      expect(JSON.stringify(request.messages)).toContain('PROMPT: echo five large texts')
    }
    const afterFirst = work.find((request) => JSON.stringify(request.messages).includes(SUMMARY_HEADING))!
    expect(afterFirst.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'PROMPT: echo five large texts' }] })
    expect(afterFirst.messages[1]).toEqual({ role: 'user', content: [{ type: 'text', text: first.summary }] })
    // The newest exchange stays verbatim.
    expect(afterFirst.messages.at(-1)).toMatchObject({ role: 'tool', name: 'bulk', content: expect.stringContaining('output') })
  })

  it('replaying the log from disk gives exactly the history every request had', async ({ h }) => {
    h.scripted.setContextWindow(WINDOW)
    let agent!: Agent
    const seen = model(h, () => agent, echoes(8), () => ({ text: 'summary of the echoes' }))
    agent = await h.createAgent()
    agent.send({ content: 'go' })
    await agent.whenIdle()
    await h.root.sessions.flush(agent.session)
    const onDisk = h.readFile(agent) as SessionRecord[]
    expect(compactions(onDisk).length).toBeGreaterThanOrEqual(2)
    const work = seen.filter((entry) => !isSummaryCall(entry.request))
    expect(work).toHaveLength(9)
    for (const { request, records } of work) expect(replayHistory(onDisk.slice(0, records))).toEqual(request.messages)
  })

  it('falls back to dropping the oldest tool outputs when the summary call fails, with a marker', async ({ h }) => {
    h.scripted.setContextWindow(WINDOW)
    let agent!: Agent
    const seen = model(h, () => agent, echoes(), () => ({ kind: 'error', code: 'SERVER', message: 'summary refused' }))
    agent = await h.createAgent()
    agent.send({ content: 'go' })
    await agent.whenIdle()
    const records = h.records(agent)
    expect(turnOutcome(records)).toEqual({ kind: 'completed' })
    const [first] = compactions(records)
    expect(first).toMatchObject({ method: 'fallback', fallbackReason: 'the summary call failed: SERVER: summary refused', uptoSeq: -1, summary: '' })
    expect(first.elided.length).toBeGreaterThan(0)
    const next = seen.filter((entry) => !isSummaryCall(entry.request)).map((entry) => entry.request)
      .find((request) => request.messages.some((message) => message.role === 'tool' && message.content === ELIDED_OUTPUT))!
    expect(estimateRequest(next)).toBeLessThanOrEqual(0.5 * WINDOW)
    // The oldest output went first.
    const tools = next.messages.filter((message) => message.role === 'tool')
    expect(tools[0]).toMatchObject({ content: ELIDED_OUTPUT })
    expect(next.messages.filter((message) => message.role === 'tool').length).toBe(next.messages.filter((message) => message.role === 'assistant').length)
    expect(tools.at(-1)).toMatchObject({ content: expect.stringContaining('output') })
  })

  it('drops the oldest exchanges with a marker when removing tool outputs is not enough, and refuses a summary that is too large', async ({ h }) => {
    h.scripted.setContextWindow(WINDOW)
    let agent!: Agent
    const chatty: ScriptResponse[] = [
      ...Array.from({ length: 5 }, (_, i) => ({ text: big(`thinking aloud ${i + 1}`, 2200), toolCalls: [{ name: 'echo', arguments: { text: 'small' } }] })),
      { text: 'done' },
    ]
    model(h, () => agent, chatty, () => ({ text: 'y'.repeat(20_000) }))
    agent = await h.createAgent()
    agent.send({ content: 'go' })
    await agent.whenIdle()
    const [first] = compactions(h.records(agent))
    expect(first.method).toBe('fallback')
    expect(first.fallbackReason).toMatch(/^the summary is too large/)
    expect(first.summary).toMatch(/^\[\d+ earlier messages were removed to fit the context window/)
    expect(first.replaced).toBeGreaterThan(0)
    expect(first.tokensAfter).toBeLessThanOrEqual(0.5 * WINDOW)
  })

  it('a CONTEXT_OVERFLOW before any output compacts once and retries once, with no window known', async ({ h }) => {
    // No window known: only the provider's refusal starts a compaction.
    let agent!: Agent
    const work: ScriptResponse[] = [
      { text: 'one', toolCalls: [{ name: 'echo', arguments: { text: big('a') } }] },
      { text: 'two', toolCalls: [{ name: 'echo', arguments: { text: big('b') } }] },
      { kind: 'error', code: 'CONTEXT_OVERFLOW', message: 'maximum context length exceeded' },
      { text: 'finished after the retry' },
    ]
    const seen = model(h, () => agent, work, () => ({ text: 'summary after overflow' }))
    agent = await h.createAgent()
    agent.send({ content: 'go' })
    await agent.whenIdle()
    const records = h.records(agent)
    expect(turnOutcome(records, 1)).toEqual({ kind: 'completed' })
    expect(compactions(records)).toEqual([expect.objectContaining({ reason: 'overflow', method: 'summary' })])
    const retried = seen.filter((entry) => !isSummaryCall(entry.request)).at(-1)!.request
    expect(retried.messages.some((message) => message.role === 'user' && message.content[0].text.includes('summary after overflow'))).toBe(true)
  })

  describe('a refusal as too long with a large known window', () => {
    // The provider reports far more than the server accepts (Ollama's num_ctx, an organisation limit).
    const LARGE = 128_000
    const refusal: ScriptResponse = { kind: 'error', code: 'CONTEXT_OVERFLOW', message: 'Input tokens exceed the configured limit of 272000 tokens.' }
    const twoSteps: ScriptResponse[] = [
      { text: 'one', toolCalls: [{ name: 'bulk', arguments: { label: 'output 1' } }] },
      { text: 'two', toolCalls: [{ name: 'bulk', arguments: { label: 'output 2' } }] },
    ]

    it('compacts under the refused size, retries, and aims under the learned limit from then on', async ({ h }) => {
      h.scripted.setContextWindow(LARGE)
      let agent!: Agent
      const seen = model(h, () => agent, [...twoSteps, refusal, ...echoes(4)], () => ({ text: 'summary after the refusal' }))
      agent = await h.createAgent()
      agent.send({ content: 'PROMPT: keep going' })
      await agent.whenIdle()
      const records = h.records(agent)
      expect(turnOutcome(records)).toEqual({ kind: 'completed' })
      const work = seen.filter((entry) => !isSummaryCall(entry.request)).map((entry) => entry.request)
      const refused = estimateRequest(work[2])
      const [first, ...later] = compactions(records)
      // The refused request's estimate is the window now, not the configured 128000.
      expect(first).toMatchObject({ reason: 'overflow', method: 'summary', tokensBefore: refused, contextWindow: refused })
      expect(first.tokensAfter).toBeLessThanOrEqual(0.5 * refused)
      expect(estimateRequest(work[3])).toBe(first.tokensAfter)
      // Remembered: later requests are compacted ahead, under the threshold of what was refused.
      expect(later.length).toBeGreaterThan(0)
      expect(later.every((data) => data.reason === 'threshold' && data.contextWindow === refused)).toBe(true)
      for (const request of work.slice(3)) expect(estimateRequest(request)).toBeLessThanOrEqual(0.8 * refused)
    })

    it('a second refusal compacts harder with the fallback; a third ends the turn CONTEXT_OVERFLOW saying what was tried', async ({ h }) => {
      h.scripted.setContextWindow(LARGE)
      let agent!: Agent
      const seen = model(h, () => agent, [...twoSteps, refusal, refusal, refusal, { text: 'never asked' }], () => ({ text: 'short summary' }))
      agent = await h.createAgent()
      agent.send({ content: 'go' })
      await agent.whenIdle()
      const records = h.records(agent)
      const all = compactions(records)
      expect(all.map((data) => [data.reason, data.method])).toEqual([['overflow', 'summary'], ['overflow', 'fallback']])
      expect(all[1].fallbackReason).toBe('the request was refused again after a summary')
      expect(all[1].contextWindow).toBeLessThan(all[0].contextWindow!)
      // One summary call (none for the fallback), three refused work requests, nothing after them.
      expect(seen.filter((entry) => isSummaryCall(entry.request))).toHaveLength(1)
      expect(seen.filter((entry) => !isSummaryCall(entry.request))).toHaveLength(5)
      const outcome = turnOutcome(records)
      expect(outcome).toMatchObject({ kind: 'error', code: 'CONTEXT_OVERFLOW' })
      const { message } = outcome as { message: string }
      expect(message).toMatch(/^the model refused the request as too long 3 times; compacted \(summary\) from about \d+ to \d+ estimated tokens, then compacted \(fallback\) from about \d+ to \d+ estimated tokens \(aiming under about \d+ estimated tokens\)\. Last refusal: Input tokens exceed the configured limit of 272000 tokens\.$/)
    })

    it('a refusal of the summary call itself falls back without another compaction', async ({ h }) => {
      h.scripted.setContextWindow(LARGE)
      let agent!: Agent
      const seen = model(h, () => agent, [...twoSteps, refusal, { text: 'done after the fallback' }], () => refusal)
      agent = await h.createAgent()
      agent.send({ content: 'go' })
      await agent.whenIdle()
      const records = h.records(agent)
      expect(turnOutcome(records)).toEqual({ kind: 'completed' })
      expect(compactions(records)).toEqual([expect.objectContaining({ reason: 'overflow', method: 'fallback', fallbackReason: expect.stringMatching(/^the summary call failed: CONTEXT_OVERFLOW/) })])
      expect(seen.filter((entry) => isSummaryCall(entry.request))).toHaveLength(1)
      expect(seen.filter((entry) => !isSummaryCall(entry.request))).toHaveLength(4)
    })

    it('a usage limit during the summary call ends the turn with it, no retry', async ({ h }) => {
      h.scripted.setContextWindow(LARGE)
      let agent!: Agent
      const seen = model(h, () => agent, [...twoSteps, refusal, { text: 'never asked' }],
        () => ({ kind: 'error', code: 'RATE_LIMIT', message: 'Rate limit reached for requests', retryAfterMs: 60_000 }))
      agent = await h.createAgent()
      agent.send({ content: 'go' })
      await agent.whenIdle()
      const records = h.records(agent)
      expect(turnOutcome(records)).toEqual({ kind: 'error', code: 'RATE_LIMIT', message: 'Rate limit reached for requests', retryAfterMs: 60_000 })
      expect(compactions(records)).toEqual([])
      expect(seen).toHaveLength(4)
    })
  })

  describe('compact() on demand', () => {
    it('compacts an idle agent whatever the threshold; input sent meanwhile waits for it', async ({ h }) => {
      let release!: () => void
      const held = new Promise<void>((resolve) => { release = resolve })
      const seen: Seen[] = []
      // The summary call waits for the test, so a send can land while the compaction runs.
      h.scripted.push(...[
        (request) => (seen.push({ request, records: 0 }), { text: 'first answer' }),
        (request) => (seen.push({ request, records: 0 }), { text: 'second answer' }),
        async (request) => { seen.push({ request, records: 0 }); await held; return { text: 'summary on request' } },
        (request) => (seen.push({ request, records: 0 }), { text: 'after the compaction' }),
      ] as ScriptStep[])
      const agent = await h.createAgent()
      agent.send({ content: 'PROMPT one ' + 'p'.repeat(2000) })
      await agent.whenIdle()
      agent.send({ content: 'PROMPT two' })
      await agent.whenIdle()
      const observed: ContextCompactionData[] = []
      h.root.on('agent/compacted', (_agent, data) => { observed.push(data) })
      const compacting = agent.compact()
      expect(agent.status).toBe('running')
      agent.send({ content: 'sent while compacting' })
      expect(await agent.compact()).toEqual({ kind: 'unchanged', why: 'the agent is busy; compact when it is idle' })
      release()
      const result = await compacting
      expect(result).toMatchObject({ kind: 'compacted', data: { reason: 'request', method: 'summary', turn: 2, step: 0 } })
      await agent.whenIdle()
      const records = h.records(agent)
      expect(compactions(records)).toEqual([(result as { data: ContextCompactionData }).data])
      expect(observed).toEqual(compactions(records))
      // The queued message ran after the compaction, on the compacted history: the summary, then the last exchange.
      const last = seen.at(-1)!.request
      expect(isSummaryCall(seen[2].request)).toBe(true)
      expect(last.messages.map((message) => message.role === 'user' ? message.content[0].text.slice(0, 60) : message.role)).toEqual([
        `${SUMMARY_HEADING}\nsummary on request`.slice(0, 60), 'PROMPT two', 'assistant', 'sent while compacting',
      ])
      expect(turnOutcome(records)).toEqual({ kind: 'completed' })
    })

    it('a cancel stops a compaction under way: nothing is recorded', async ({ h }) => {
      const asked = deferred()
      h.scripted.push({ text: 'one' }, { text: 'two' }, () => { asked.resolve(); return { kind: 'hang' } })
      const agent = await h.createAgent()
      await prompt(agent, 'first ' + 'q'.repeat(2000))
      await prompt(agent, 'second')
      const compacting = agent.compact()
      await asked.promise
      expect(agent.cancel('user')).toBe(true)
      expect(await compacting).toEqual({ kind: 'unchanged', why: 'aborted' })
      expect(compactions(h.records(agent))).toEqual([])
      expect(agent.status).toBe('idle')
    })
  })

  it('agent/compact can veto a compaction or replace its summary', async ({ h }) => {
    h.scripted.setContextWindow(WINDOW)
    let agent!: Agent
    model(h, () => agent, echoes(6), () => ({ text: 'model summary' }))
    let calls = 0
    h.root.on('agent/compact', async (_agent, proposal, next) => {
      calls++
      if (calls === 1) return { kind: 'veto', reason: 'not yet' }
      expect(proposal.summary).toContain('model summary')
      await next()
      return { kind: 'accept', summary: 'policy summary' }
    })
    agent = await h.createAgent()
    agent.send({ content: 'go' })
    await agent.whenIdle()
    const all = compactions(h.records(agent))
    expect(calls).toBeGreaterThanOrEqual(2)
    expect(all[0]).toMatchObject({ method: 'policy', summary: 'policy summary' })
    expect(all).toHaveLength(calls - 1)
  })

  it('does nothing when disabled or when no window is known', async ({ h }) => {
    let agent!: Agent
    model(h, () => agent, echoes(3), () => ({ text: 'unused' }))
    agent = await h.createAgent()
    agent.send({ content: 'go' })
    await agent.whenIdle()
    expect(compactions(h.records(agent))).toEqual([])
    expect(turnOutcome(h.records(agent))).toEqual({ kind: 'completed' })
  })
})
