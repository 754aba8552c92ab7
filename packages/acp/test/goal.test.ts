import { createScriptedProvider, type ModelRequest, type ScriptStep } from '@goalkeeper/model'
import { call, tools } from '@goalkeeper/test-kit'
import { describe, expect, it } from 'vitest'
import type { GoalSnapshot } from '../src/index.ts'
import { modelCall, setup, textOf, type Setup, type TestClient } from './helpers.ts'

/** The goal as the last tool result of the request shows it (after get_goal). */
const goalIn = (request: ModelRequest) => {
  const result = request.messages.findLast((message) => message.role === 'tool' && message.name === 'get_goal')
  return JSON.parse((result as { content: string }).content).goal
}

/** Round 1 writes a file, round 2 reads the goal and completes it: the model's side of a goal that succeeds. */
const twoRounds: ScriptStep[] = [
  tools(call('write_file', { path: 'x.txt', content: 'x\n' })),
  { text: 'Wrote x.txt.' },
  tools(call('get_goal')),
  (request) => {
    const goal = goalIn(request)
    return tools(call('update_goal', { goal_id: goal.goal_id, revision: goal.revision, action: 'complete' }))
  },
  { text: 'The goal is complete: x.txt exists.' },
]

/** The completion judge on a scripted model of its own (`judge`), so agent and judge calls are told apart. */
async function withJudge({ h }: Setup) {
  const judge = createScriptedProvider()
  await h.load({ name: 'judge-model', inject: ['models'], apply: (ctx: any) => { ctx.models.register('judge', judge) } })
  await h.load(await import('@goalkeeper/goal-judge'), { model: 'judge' })
  return judge
}

const verdict = (v: 'met' | 'not-met', reasons: string[], missing: string[] = []) => ({ text: JSON.stringify({ verdict: v, reasons, missing }) })

const goals = (client: TestClient, sessionId: string) =>
  client.of(sessionId, 'session_info_update').map((update) => (update._meta as { goal: GoalSnapshot | null }).goal)

describe('goals over ACP', () => {
  it('/goal in a prompt runs the rounds inside that prompt, streamed, and answers when the goal is complete', async () => {
    const { h, client } = await setup()
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    h.scripted.push(...twoRounds)
    const answer = await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '/goal --max-rounds 4 Create x.txt' }] })
    expect(answer).toEqual({ stopReason: 'end_turn' })
    // The command's own answer, then the rounds' text.
    expect(textOf(client.of(sessionId, 'agent_message_chunk'))).toMatch(/^Goal set[\s\S]*Wrote x\.txt\.The goal is complete: x\.txt exists\.$/)
    expect(client.of(sessionId, 'tool_call').map((update) => update.title)).toEqual(['Write x.txt', 'Read the goal', 'Goal: complete'])
    // The plan shows each round as it starts and how it settled.
    const plans = client.of(sessionId, 'plan').map((plan) => plan.entries.map((entry) => `${entry.status}: ${entry.content}`))
    expect(plans).toContainEqual(['in_progress: Goal, active (armed): Create x.txt', 'in_progress: Round 1/4: running'])
    expect(plans).toContainEqual(['in_progress: Goal, active (armed): Create x.txt', 'completed: Round 1/4: completed', 'in_progress: Round 2/4: running'])
    expect(plans.at(-1)).toEqual(['completed: Goal, complete: Create x.txt', 'completed: Round 1/4: completed', 'completed: Round 2/4: completed'])
    const last = goals(client, sessionId).at(-1)!
    expect(last).toMatchObject({ objective: 'Create x.txt', status: 'complete', phase: 'complete', activation: 'disarmed', roundsStarted: 2, maxRounds: 4, iterations: 2, controlMethod: '_goalkeeper/goal', lastRound: { round: 2, state: 'ended', outcome: 'completed' } })
  })

  it('a round at the step limit shows as such in the plan, and the goal goes on to complete in the same prompt', async () => {
    const { h, client } = await setup({ agentLoop: { maxSteps: 3 } })
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    h.scripted.push(tools(call('write_file', { path: 'x.txt', content: 'x\n' })), tools(call('list_dir')), tools(call('list_dir')), ...twoRounds.slice(2))
    const answer = await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '/goal --max-rounds 4 Create x.txt' }] })
    expect(answer).toEqual({ stopReason: 'end_turn' })
    const plans = client.of(sessionId, 'plan').map((plan) => plan.entries.map((entry) => `${entry.status}: ${entry.content}`))
    expect(plans.at(-1)).toEqual(['completed: Goal, complete: Create x.txt', expect.stringMatching(/^completed: Round 1\/4: reached the step limit: .*maxSteps/), 'completed: Round 2/4: completed'])
  })

  it('the extension sets, reads and controls the goal; rounds stream without a prompt', async () => {
    const { h, client } = await setup()
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    h.scripted.push(...twoRounds)
    const set = await client.agent.request<any>('_goalkeeper/goal', { sessionId, action: 'set', objective: 'Create x.txt', maxRounds: 3 })
    expect(set).toMatchObject({ ok: true, goal: { objective: 'Create x.txt', status: 'active', activation: 'armed', maxRounds: 3 } })
    expect(set.message).toMatch(/^Goal set/)
    await client.until((update) => update.sessionUpdate === 'session_info_update' && (update._meta as any).goal?.status === 'complete')
    expect(client.of(sessionId, 'tool_call')).toHaveLength(3)
    const read = await client.agent.request<any>('_goalkeeper/goal', { sessionId, action: 'get' })
    expect(read.goal).toMatchObject({ status: 'complete', roundsStarted: 2 })
    await expect(client.agent.request('_goalkeeper/goal', { sessionId, action: 'pause' })).rejects.toMatchObject({ code: -32602, data: { code: 'GOAL_INVALID_TRANSITION' } })
    const cleared = await client.agent.request<any>('_goalkeeper/goal', { sessionId, action: 'clear' })
    expect(cleared.goal).toBeNull()
    expect(goals(client, sessionId).at(-1)).toBeNull()
    expect(client.of(sessionId, 'plan').at(-1)!.entries).toEqual([])
  })

  it('/goal until runs rounds until the judge finds the condition met, with no complete call; the snapshot carries the condition and the evidence', async () => {
    const s = await setup()
    const judge = await withJudge(s)
    const { h, client } = s
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    h.scripted.push(tools(call('write_file', { path: 'x.txt', content: 'x\n' })), { text: 'Wrote x.txt.' })
    judge.push(verdict('met', ['x.txt exists.']))
    const answer = await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '/goal until x.txt exists' }] })
    expect(answer).toEqual({ stopReason: 'end_turn' })
    expect(client.of(sessionId, 'tool_call').map((update) => update.title)).toEqual(['Write x.txt'])
    expect(goals(client, sessionId).at(-1)).toMatchObject({
      objective: 'x.txt exists', until: 'x.txt exists', status: 'complete', roundsStarted: 1,
      judgement: { attempts: 1, last: { judge: 'judge', verdict: 'met', accepted: true, reasons: ['x.txt exists.'] } },
      completedOn: 'judged met by judge', statusText: 'complete (judged met by judge)',
    })
  })

  it('the extension sets a goal with a condition; a refusal shows in the snapshot as it is recorded, and its reasons reach the next round', async () => {
    const s = await setup()
    const judge = await withJudge(s)
    const { h, client } = s
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    h.scripted.push(
      tools(call('write_file', { path: 'x.txt', content: 'draft\n' })), { text: 'A draft.' },
      tools(call('write_file', { path: 'x.txt', content: 'ok\n' })), { text: 'Now it says ok.' },
    )
    judge.push(verdict('not-met', ['x.txt says draft.'], ['x.txt saying ok']), verdict('met', ['x.txt says ok.']))
    const set = await client.agent.request<any>('_goalkeeper/goal', { sessionId, action: 'set', objective: 'Write x.txt', until: 'x.txt says ok', maxRounds: 3 })
    expect(set).toMatchObject({ ok: true, goal: { objective: 'Write x.txt', until: 'x.txt says ok', statusText: 'active (armed)' } })
    await client.until((update) => update.sessionUpdate === 'session_info_update' && (update._meta as any).goal?.status === 'complete')
    const texts = goals(client, sessionId).map((goal) => goal?.statusText)
    // The refusal is shown while round 2 has not started yet: from the goal/judgement record, not a goal change.
    expect(texts).toContain('active (armed); not complete: judged not met by judge: x.txt says draft.')
    expect(texts.at(-1)).toBe('complete (judged met by judge)')
    const prompts = h.scripted.requests.flatMap((request) => request.messages).filter((message) => message.role === 'user').map((message) => message.content.map((block) => ('text' in block ? block.text : '')).join(''))
    expect(prompts.find((text) => text.includes('Round: 2/'))).toContain('x.txt says draft.')
  })

  it('refuses a condition without a judge, and until on another action', async () => {
    const { h, client } = await setup()
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    await expect(client.agent.request('_goalkeeper/goal', { sessionId, action: 'set', until: 'x.txt exists' })).rejects.toMatchObject({ code: -32602, data: { code: 'GOAL_NO_JUDGE' } })
    await expect(client.agent.request('_goalkeeper/goal', { sessionId, action: 'edit', objective: 'x', until: 'x.txt exists' })).rejects.toMatchObject({ code: -32602, data: { until: { _errors: ['action "edit" takes no until: a condition is set with the goal'] } } })
    await expect(client.agent.request('_goalkeeper/goal', { sessionId, action: 'set', until: ' ' })).rejects.toMatchObject({ code: -32602, data: { until: { _errors: ['until, when given, is a non-empty condition'] } } })
  })

  it('refuses malformed goal requests by naming the field', async () => {
    const { h, client } = await setup()
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    await expect(client.agent.request('_goalkeeper/goal', { sessionId, action: 'set' })).rejects.toMatchObject({ code: -32602, data: { objective: { _errors: ['action "set" needs a non-empty objective'] } } })
    await expect(client.agent.request('_goalkeeper/goal', { sessionId, action: 'launch' })).rejects.toMatchObject({ code: -32602 })
    await expect(client.agent.request('_goalkeeper/goal', { sessionId, action: 'get', maxRounds: 3 })).rejects.toMatchObject({ code: -32602 })
    await expect(client.agent.request('_goalkeeper/goal', { sessionId: 'nope', action: 'get' })).rejects.toMatchObject({ code: -32002, data: { sessionId: 'nope' } })
    await expect(client.agent.request('_goalkeeper/goals', { sessionId, action: 'get' })).rejects.toMatchObject({ code: -32601 })
  })

  it('session/cancel in the middle of a round cancels it and pauses the goal, as Ctrl-C does', async () => {
    const { h, client } = await setup()
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    const round = modelCall()
    h.scripted.push(() => (round.called(), { kind: 'hang' as const, text: 'Working on it' }))
    const prompt = client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '/goal Create x.txt' }] })
    await client.until((update) => update.sessionUpdate === 'plan' && update.entries.some((entry) => entry.content === 'Round 1/256: running'))
    // The round's start is saved before its model call: cancel once the call is under way.
    await round.reached
    await client.agent.notify('session/cancel', { sessionId })
    expect(await prompt).toEqual({ stopReason: 'cancelled' })
    expect(h.root.goals.get(h.root.agents.get(sessionId)!)).toMatchObject({ phase: 'paused', activation: 'disarmed', roundsStarted: 1 })
    expect(goals(client, sessionId).at(-1)).toMatchObject({ status: 'paused', lastRound: { round: 1, state: 'ended', outcome: 'aborted' } })
    const ends = h.records(sessionId).filter((record) => record.type === 'turn/end').map((record) => (record.data as any).outcome)
    expect(ends).toEqual([{ kind: 'aborted', cause: 'user' }])
    // /goal resume in a new prompt goes on with round 2.
    h.scripted.push({ text: 'Round 2 done.' }, tools(call('get_goal')), (request) => tools(call('update_goal', { goal_id: goalIn(request).goal_id, revision: goalIn(request).revision, action: 'complete' })), { text: 'Complete.' })
    expect(await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '/goal resume' }] })).toEqual({ stopReason: 'end_turn' })
    expect(goals(client, sessionId).at(-1)).toMatchObject({ status: 'complete', roundsStarted: 3 })
  })

  it('a prompt sent while rounds run goes before the next round and is answered with its own turn', async () => {
    const { h, client } = await setup()
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const reached = modelCall()
    h.scripted.push(async () => { reached.called(); await gate; return { text: 'Round 1 done.' } }, { text: 'Answer to the person.' }, tools(call('get_goal')),
      (request) => tools(call('update_goal', { goal_id: goalIn(request).goal_id, revision: goalIn(request).revision, action: 'complete' })), { text: 'Complete.' })
    const goalPrompt = client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '/goal Finish' }] })
    await client.until((update) => update.sessionUpdate === 'plan' && update.entries.some((entry) => entry.content === 'Round 1/256: running'))
    await reached.reached
    const human = client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'a question' }] })
    release()
    // The newest prompt holds the rounds that follow; the older one ends with its own work.
    expect(await goalPrompt).toEqual({ stopReason: 'end_turn' })
    expect(await human).toEqual({ stopReason: 'end_turn' })
    const opened = h.records(sessionId).filter((record) => record.type === 'user/message').map((record) => (record.data as any).source.kind)
    // (The plugin message is the goal tool's "stop calling tools" after the model completed the goal.)
    expect(opened).toEqual(['goal', 'human', 'goal', 'plugin'])
    expect(h.root.goals.get(h.root.agents.get(sessionId)!)?.phase).toBe('complete')
  })

  it('a prompt sent while a round is calling tools ends that round after its step, and the plan says so', async () => {
    const { h, client } = await setup()
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const reached = modelCall()
    h.scripted.push(async () => { reached.called(); await gate; return tools(call('write_file', { path: 'x.txt', content: 'x\n' })) }, { text: 'Answer to the person.' }, tools(call('get_goal')),
      (request) => tools(call('update_goal', { goal_id: goalIn(request).goal_id, revision: goalIn(request).revision, action: 'complete' })), { text: 'Complete.' })
    const goalPrompt = client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '/goal Finish' }] })
    await client.until((update) => update.sessionUpdate === 'plan' && update.entries.some((entry) => entry.content === 'Round 1/256: running'))
    await reached.reached
    const queued = new Promise<void>((resolve) => {
      const off = h.root.on('agent/queued', (_agent, message) => {
        if (message.source.kind !== 'human') return
        off()
        resolve()
      })
    })
    const human = client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'a question' }] })
    await queued
    release()
    expect(await goalPrompt).toEqual({ stopReason: 'end_turn' })
    expect(await human).toEqual({ stopReason: 'end_turn' })
    const outcomes = h.records(sessionId).filter((record) => record.type === 'turn/end').map((record) => (record.data as any).outcome.kind)
    expect(outcomes).toEqual(['preempted', 'completed', 'completed'])
    // Round 1 made one model call, its write ran; the person's question was the next model call.
    expect(h.scripted.requests[1].messages.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'text', text: 'a question' }] })
    const plans = client.of(sessionId, 'plan').map((plan) => plan.entries.map((entry) => `${entry.status}: ${entry.content}`))
    expect(plans.flat()).toContainEqual(expect.stringMatching(/^completed: Round 1\/256: ended early: human message \S+ arrived during goal round 1$/))
  })
})
