import { afterEach, describe, expect, it } from 'vitest'
import { BLOCK } from '@goalkeeper/goal'
import { executeGoalCommand, parseGoalCommand } from '@goalkeeper/tool-goal'
import { createHarness, type Harness } from '@goalkeeper/test-kit'
import type { Agent } from '@goalkeeper/agent-loop'
import { completeStep, evidenceOf, expectReplayEqualsLive, judgeSetup, roundPrompts, settled, verdict, writeStep } from './helpers.ts'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

const toolCalls = (agent: Agent, name: string) => h!.records(agent).filter((r) => r.type === 'tool/call' && (r.data as { name: string }).name === name)

describe('a goal defined by a condition (until)', () => {
  it('completes when the judge finds the condition met after a round, with no update_goal call; the judge call counts against the budget', async () => {
    const s = await judgeSetup({}, { budget: true })
    h = s.h
    const { agent, judge } = s
    h.scripted.push(writeStep('done.txt', 'ok\n'), { text: 'Wrote done.txt with ok.' })
    judge.push(verdict('met', ['done.txt says ok.']))
    h.root.goals.create(agent, { objective: 'Write done.txt', until: 'done.txt exists and says ok' })
    const goal = await settled(h, agent)

    expect(goal).toMatchObject({ phase: 'complete', roundsStarted: 1, until: 'done.txt exists and says ok', judgement: { attempts: 1, rejectionsInARow: 0, last: { verdict: 'met', accepted: true } } })
    expect(goal).not.toHaveProperty('completedBy')
    // Two calls of the agent's round and the judge's.
    expect(goal!.spent?.calls).toBe(3)
    expect(toolCalls(agent, 'update_goal')).toHaveLength(0)
    expect(roundPrompts(h.scripted)[0]).toContain('Done when: "done.txt exists and says ok"')
    const evidence = evidenceOf(judge.requests[0])
    expect(evidence).toContain('Condition that completes the goal: "done.txt exists and says ok"')
    expect(evidence).toContain('Wrote done.txt with ok.')
    await expectReplayEqualsLive(h, agent)
  })

  it('"not met" puts the reasons into the next round\'s prompt and does not block at the rejection bound', async () => {
    const s = await judgeSetup({ maxRejections: 1 })
    h = s.h
    const { agent, judge } = s
    h.scripted.push(
      writeStep('done.txt', 'draft\n'), { text: 'A draft so far.' },
      writeStep('done.txt', 'ok\n'), { text: 'Now it says ok.' },
    )
    judge.push(verdict('not-met', ['done.txt says "draft".'], ['the text ok']), verdict('met', ['done.txt says ok.']))
    h.root.goals.create(agent, { objective: 'Write done.txt', until: 'done.txt says ok' })
    const goal = await settled(h, agent)

    // One "not met" with maxRejections 1 did not block: the goal was simply not done after round 1.
    expect(goal).toMatchObject({ phase: 'complete', roundsStarted: 2, judgement: { attempts: 2, rejectionsInARow: 0 } })
    const prompts = roundPrompts(h.scripted)
    expect(prompts).toHaveLength(2)
    expect(prompts[0]).not.toContain('not accepted')
    expect(prompts[1]).toContain('The last completion was not accepted by the judge (not-met, 1 in a row). Its reasons:\n- "done.txt says \\"draft\\"."\nWhat it found missing:\n- "the text ok"')
    expect(evidenceOf(judge.requests[1])).toContain('Now it says ok.')
    expect(h.records(agent).filter((r) => r.type === 'goal/judgement').map((r) => (r.data as { accepted: boolean }).accepted)).toEqual([false, true])
    await expectReplayEqualsLive(h, agent)
  })

  it('a failing check keeps the goal open: the judge is not asked, and the round cap ends it', async () => {
    const s = await judgeSetup()
    h = s.h
    const { agent, judge } = s
    h.scripted.push({ text: 'I think it is done.' })
    judge.push(verdict('met', ['Looks done.']))
    h.root.goals.create(agent, { objective: 'Write done.txt', until: 'done.txt exists', verify: ['test -f done.txt'], maxGoalRounds: 1 })
    const goal = await settled(h, agent)

    expect(goal).toMatchObject({ phase: 'blocked', blockedReason: { code: BLOCK.roundLimit }, verification: { last: { ok: false, command: 'test -f done.txt' } } })
    expect(goal).not.toHaveProperty('judgement')
    expect(judge.requests).toHaveLength(0)
    await expectReplayEqualsLive(h, agent)
  })

  it('a refused claim in a round is the round\'s ruling: the judge is not asked a second time when it ends', async () => {
    const s = await judgeSetup()
    h = s.h
    const { agent, judge } = s
    h.scripted.push(completeStep(h, agent, 'Done, I believe.'), { text: 'Refused; next round.' }, writeStep('done.txt', 'ok\n'), { text: 'Wrote it.' })
    judge.push(verdict('not-met', ['Nothing was written.']), verdict('met', ['done.txt exists.']))
    h.root.goals.create(agent, { objective: 'Write done.txt', until: 'done.txt exists' })
    const goal = await settled(h, agent)

    expect(goal).toMatchObject({ phase: 'complete', roundsStarted: 2, judgement: { attempts: 2 } })
    expect(judge.requests).toHaveLength(2)
  })

  it('/goal until <condition> sets a goal whose objective is the condition, and the judge completes it', async () => {
    expect(parseGoalCommand('/goal until the tests pass')).toEqual({ kind: 'create', objective: 'the tests pass', until: 'the tests pass' })
    expect(parseGoalCommand('/goal until --max-rounds 3 the tests pass')).toEqual({ kind: 'create', objective: 'the tests pass', until: 'the tests pass', maxGoalRounds: 3 })
    expect(parseGoalCommand('/goal until')).toMatchObject({ kind: 'invalid' })
    const s = await judgeSetup()
    h = s.h
    h.scripted.push({ text: 'Nothing yet.' })
    s.judge.push(verdict('met', ['It is.']))
    const result = executeGoalCommand(h.root, s.agent, parseGoalCommand('/goal until the sky is blue') as never)
    expect(result).toMatchObject({ ok: true })
    expect(await settled(h, s.agent)).toMatchObject({ phase: 'complete', objective: 'the sky is blue', until: 'the sky is blue' })
    // Without a judge the condition would never be checked: the command is refused and no goal is set.
    await h.dispose()
    h = await createHarness()
    await h.load(await import('@goalkeeper/goal'), {})
    await h.load(await import('@goalkeeper/tool-goal'), {})
    const agent = await h.createAgent()
    expect(executeGoalCommand(h.root, agent, parseGoalCommand('/goal until the sky is blue')!)).toMatchObject({ ok: false, code: 'GOAL_NO_JUDGE' })
    expect(h.root.goals.get(agent)).toBeUndefined()
  })
})
