import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { BLOCK, describeVerification } from '@goalkeeper/goal'
import { executeGoalCommand, parseGoalCommand } from '@goalkeeper/tool-goal'
import type { Harness } from '@goalkeeper/test-kit'
import type { Agent } from '@goalkeeper/agent-loop'
import { AGENT_JUDGE_NOTE } from '../src/index.ts'
import { completeStep, evidenceOf, expectReplayEqualsLive, judgeSetup, roundPrompts, settled, verdict, writeStep } from './helpers.ts'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

function toolResults(agent: Agent, name: string): { ok: boolean; content: string; error?: { code: string } }[] {
  const records = h!.records(agent)
  const ids = new Set(records.filter((r) => r.type === 'tool/call' && (r.data as { name: string }).name === name).map((r) => (r.data as { callId: string }).callId))
  return records.filter((r) => r.type === 'tool/result' && ids.has((r.data as { callId: string }).callId)).map((r) => r.data as never)
}

describe('the judge of a completion', () => {
  it('refuses a false completion with reasons that reach the next round\'s prompt, then accepts the real one; the evidence is kept', async () => {
    const s = await judgeSetup({}, { git: true })
    h = s.h
    const { agent, judge } = s
    h.scripted.push(
      writeStep('done.txt', 'draft\n'),
      completeStep(h, agent, 'Finished: done.txt is written.'),
      { text: 'The judge wants "ok"; next round.' },
      writeStep('done.txt', 'ok\n'),
      completeStep(h, agent, 'done.txt now says ok.'),
      { text: 'Done.' },
    )
    judge.push(verdict('not-met', ['done.txt says "draft", not "ok".'], ['done.txt with the text ok']), verdict('met', ['done.txt says ok and the check passed.']))
    h.root.goals.create(agent, { objective: 'Write done.txt containing ok', verify: ['test -f done.txt'] })
    const goal = await settled(h, agent)

    expect(goal).toMatchObject({ phase: 'complete', roundsStarted: 2, judgement: { attempts: 2, rejectionsInARow: 0, last: { judge: 'judge', verdict: 'met', accepted: true } } })
    expect(describeVerification(goal!)).toBe('verified: 1 check passed; judged met by judge')
    const [refused, accepted] = toolResults(agent, 'update_goal')
    expect(refused).toMatchObject({ ok: false, error: { code: 'GOAL_JUDGE_REJECTED' } })
    expect(refused.content).toBe([
      'The goal was not completed: the judge (judge) answered "not-met".',
      'Reasons:', '- done.txt says "draft", not "ok".',
      'Missing:', '- done.txt with the text ok',
      'Do what is missing, show it in the workspace, and call update_goal complete again.',
    ].join('\n'))
    expect(accepted.ok).toBe(true)
    expect(h.scripted.requests[0].system).toContain(AGENT_JUDGE_NOTE)
    // The refusal starts the next round: its prompt carries the reasons, as data.
    const prompts = roundPrompts(h.scripted)
    expect(prompts).toHaveLength(2)
    expect(prompts[0]).not.toContain('judge')
    expect(prompts[1]).toContain('The last completion was not accepted by the judge (not-met, 1 in a row). Its reasons:\n- "done.txt says \\"draft\\", not \\"ok\\"."\nWhat it found missing:\n- "done.txt with the text ok"')

    // The evidence: the check, the completion message, the named file, the diff since the goal began; no transcript.
    const first = evidenceOf(judge.requests[0])
    expect(judge.requests[0].tools).toEqual([])
    expect(first).toContain('- `test -f done.txt`: passed (exit code 0)')
    expect(first).toContain('<<<\nFinished: done.txt is written.\n>>>')
    expect(first).toContain('- done.txt\n<<<\ndraft\n\n>>>')
    expect(first).toContain('untracked: done.txt')
    expect(first).not.toContain('<goal_round>')
    expect(first).not.toContain('write_file')
    expect(evidenceOf(judge.requests[1])).toContain('done.txt now says ok.')
    expect(evidenceOf(judge.requests[1])).not.toContain('Finished: done.txt is written.')

    const records = h.records(agent).filter((r) => r.type === 'goal/judgement').map((r) => r.data)
    expect(records).toEqual([
      { goalId: goal!.id, judge: 'judge', verdict: 'not-met', accepted: false, reasons: ['done.txt says "draft", not "ok".'], missing: ['done.txt with the text ok'], diff: { summary: 'untracked: done.txt', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) } },
      { goalId: goal!.id, judge: 'judge', verdict: 'met', accepted: true, reasons: ['done.txt says ok and the check passed.'], missing: [], diff: { summary: 'untracked: done.txt', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) } },
    ])
    // Same file, other content: the hash tells the two states apart.
    expect((records[0] as { diff: { sha256: string } }).diff.sha256).not.toBe((records[1] as { diff: { sha256: string } }).diff.sha256)
    await expectReplayEqualsLive(h, agent)
  })

  it('a failing check wins over a judge that would say met: the judge is not asked', async () => {
    const s = await judgeSetup()
    h = s.h
    const { agent, judge } = s
    h.scripted.push(completeStep(h, agent, 'All done.'), { text: 'The check fails; I stop here.' })
    judge.push(verdict('met', ['Looks done.']))
    h.root.goals.create(agent, { objective: 'Make the check pass', verify: ['exit 4'], maxGoalRounds: 1 })
    const goal = await settled(h, agent)
    expect(goal).toMatchObject({ phase: 'blocked', blockedReason: { code: BLOCK.roundLimit }, verification: { attempts: 1, failures: 1 } })
    expect(goal).not.toHaveProperty('judgement')
    expect(toolResults(agent, 'update_goal')[0]).toMatchObject({ ok: false, error: { code: 'GOAL_CHECK_FAILED' } })
    expect(judge.requests).toHaveLength(0)
  })

  it('blocks judge-rejected with the last reasons after the configured rejections in a row', async () => {
    const s = await judgeSetup({ maxRejections: 2 })
    h = s.h
    const { agent, judge } = s
    h.scripted.push(completeStep(h, agent, 'Done, trust me.'), { text: 'Round over.' }, completeStep(h, agent, 'Really done.'), { text: 'Blocked.' })
    judge.push(verdict('not-met', ['Nothing changed.']), verdict('cannot-tell', ['No evidence at all.'], ['a file showing the work']))
    h.root.goals.create(agent, { objective: 'Write the report' })
    const goal = await settled(h, agent)
    expect(goal).toMatchObject({
      phase: 'blocked',
      roundsStarted: 2,
      blockedReason: { code: BLOCK.judgeRejected, message: 'The judge judge refused the completion 2 times in a row. Last reasons: No evidence at all.' },
      judgement: { attempts: 2, rejectionsInARow: 2, last: { verdict: 'cannot-tell', accepted: false } },
    })
    expect(toolResults(agent, 'update_goal')[1]).toMatchObject({ ok: false, error: { code: 'GOAL_JUDGE_REJECTED' }, content: expect.stringMatching(/^The goal was not completed and is now blocked \(judge-rejected\)/) })
    // The block ends the round: the model is not asked again after the refused completion.
    expect(h.scripted.remaining).toBe(1)
    await expectReplayEqualsLive(h, agent)
  })

  it('"cannot-tell" lets the completion stand when the composition says so', async () => {
    const s = await judgeSetup({ cannotTell: 'accept' })
    h = s.h
    const { agent, judge } = s
    h.scripted.push(completeStep(h, agent, 'Done.'), { text: 'Summary.' })
    judge.push(verdict('cannot-tell', ['No way to see it from here.']))
    h.root.goals.create(agent, { objective: 'Tidy up' })
    const goal = await settled(h, agent)
    expect(goal).toMatchObject({ phase: 'complete', judgement: { last: { verdict: 'cannot-tell', accepted: true } } })
    expect(describeVerification(goal!)).toBe('accepted although judge could not tell')
  })

  it('a judge that answers garbage and then errs does not let the completion stand: bounded tries, then judge-failed', async () => {
    const s = await judgeSetup({ attempts: 2 })
    h = s.h
    const { agent, judge } = s
    h.scripted.push(completeStep(h, agent, 'Done.'), { text: 'unused' })
    judge.push({ text: 'Yes, looks met to me!' }, { kind: 'error', code: 'SERVER', message: 'overloaded' }, verdict('met', ['never asked']))
    h.root.goals.create(agent, { objective: 'Ship it' })
    const goal = await settled(h, agent)
    const reason = 'The judge judge could not decide after 2 tries: SERVER: overloaded.'
    expect(goal).toMatchObject({ phase: 'blocked', blockedReason: { code: BLOCK.judgeFailed, message: reason }, judgement: { attempts: 1, last: { verdict: 'cannot-tell', accepted: false, reasons: [reason] } } })
    expect(judge.requests).toHaveLength(2)
    expect(toolResults(agent, 'update_goal')[0]).toMatchObject({ ok: false, error: { code: 'GOAL_JUDGE_FAILED' } })
  })

  it('a judge that does not answer in time is a failed try, like one that answers off the schema', async () => {
    const s = await judgeSetup({ attempts: 2, timeoutMs: 200 })
    h = s.h
    const { agent, judge } = s
    h.scripted.push(completeStep(h, agent, 'Done.'), { text: 'unused' })
    judge.push({ text: JSON.stringify({ verdict: 'met', reasons: [] , missing: [] }) }, { kind: 'hang' })
    h.root.goals.create(agent, { objective: 'Ship it' })
    const goal = await settled(h, agent)
    expect(goal).toMatchObject({ phase: 'blocked', blockedReason: { code: BLOCK.judgeFailed, message: 'The judge judge could not decide after 2 tries: no answer within 200 ms.' } })
    expect(judge.requests).toHaveLength(2)
  })

  it('a judge model that is not registered blocks at once, naming it', async () => {
    const s = await judgeSetup({ model: 'absent' })
    h = s.h
    const { agent } = s
    h.scripted.push(completeStep(h, agent, 'Done.'), { text: 'unused' })
    h.root.goals.create(agent, { objective: 'Ship it' })
    const goal = await settled(h, agent)
    expect(goal).toMatchObject({ phase: 'blocked', blockedReason: { code: BLOCK.judgeFailed, message: 'The judge absent could not decide after no try: no model provider is registered as "absent".' } })
  })

  it('judge calls count against the goal\'s budgets, and a budget they use up stops the goal before the completion stands', async () => {
    const s = await judgeSetup({}, { budget: true })
    h = s.h
    const { agent, judge } = s
    const complete = completeStep(h, agent, 'Done.') as (request: unknown) => object
    h.scripted.push((request) => ({ ...complete(request), usage: { inputTokens: 100, outputTokens: 10 } }), { text: 'unused' })
    judge.push(verdict('met', ['Fine.']))
    h.root.goals.create(agent, { objective: 'Ship it', budgets: { tokens: 300 } })
    const goal = await settled(h, agent)
    // The judge's call (340 tokens) uses the budget up during the step; the agent's 110 are counted at its end.
    expect(goal).toMatchObject({ phase: 'blocked', blockedReason: { code: BLOCK.budgetLimited }, spent: { tokens: 450, calls: 2 } })
    expect(h.records(agent).filter((r) => r.type === 'goal/judgement')).toHaveLength(0)
    expect(toolResults(agent, 'update_goal')[0]).toMatchObject({ ok: false, error: { code: 'GOAL_JUDGE_STALE' } })
    await expectReplayEqualsLive(h, agent)
  })

  it('a person\'s /goal complete stands without checks or judge', async () => {
    const s = await judgeSetup()
    h = s.h
    const { agent, judge } = s
    const goal = h.root.goals.create(agent, { objective: 'Ship it', verify: ['exit 1'] })
    const result = executeGoalCommand(h.root, agent, parseGoalCommand('/goal complete')!)
    expect(result).toMatchObject({ ok: true, goal: { id: goal.id, phase: 'complete' } })
    expect(judge.requests).toHaveLength(0)
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'complete', completedBy: 'person' })
    expect(describeVerification(h.root.goals.get(agent)!)).toBe('completed by a person')
    await expectReplayEqualsLive(h, agent)
  })

  it('names only files inside the workspace as evidence', async () => {
    const s = await judgeSetup()
    h = s.h
    const { agent, judge } = s
    fs.writeFileSync(path.join(h.dir, 'outside.txt'), 'SECRET-OUTSIDE')
    fs.symlinkSync(path.join(h.dir, 'outside.txt'), path.join(h.workspace, 'link.txt'))
    fs.writeFileSync(path.join(h.workspace, 'inside.md'), 'inside text')
    h.scripted.push(completeStep(h, agent, 'See inside.md, ../outside.txt and link.txt.'), { text: 'Summary.' })
    judge.push(verdict('met', ['Fine.']))
    h.root.goals.create(agent, { objective: 'Ship it' })
    await settled(h, agent)
    const evidence = evidenceOf(judge.requests[0])
    expect(evidence).toContain('- inside.md\n<<<\ninside text\n>>>')
    expect(evidence).not.toContain('SECRET-OUTSIDE')
    expect(evidence).toContain('The workspace is not a git work tree: no diff is available.')
  })
})
