import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import { foldGoal, type GoalState } from '@goalkeeper/goal'
import { roundOf, toolGoalHarness, toolOutcomes, update, userTexts, type Harness } from './helpers.ts'

let h: Harness
afterEach(async () => {
  delete process.env.CHECK_TEST_API_KEY
  await h?.dispose()
})

async function setup(config: Record<string, unknown> = {}, workspace: Record<string, unknown> = {}): Promise<Agent> {
  h = await toolGoalHarness(config, { workspaceTools: { root: undefined, ...workspace } })
  return h.createAgent()
}

async function completeInRound(agent: Agent, goal: GoalState): Promise<void> {
  h.scripted.push(update(goal, 'complete'), { text: 'Summary.' })
  agent.send(roundOf(goal))
  await agent.whenIdle()
}

async function expectReplayEqualsLive(agent: Agent): Promise<void> {
  await h.root.sessions.flush(agent.session)
  const { activation: _, ...live } = h.root.goals.get(agent)!
  expect(foldGoal(h.readFile(agent))).toEqual(live)
}

describe('verified completion', () => {
  it('a passing check lets the completion stand and is recorded with it', async () => {
    const agent = await setup()
    fs.writeFileSync(path.join(h.workspace, 'ok.txt'), 'done\n')
    const goal = h.root.goals.create(agent, { objective: 'Write ok.txt', verify: ['test -f ok.txt', 'cat ok.txt'] })
    await completeInRound(agent, goal)
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'complete', verification: { attempts: 1, failures: 0, last: { command: 'cat ok.txt', ok: true, exitCode: 0 } } })
    const checks = h.records(agent).filter((r) => r.type === 'goal/check').map((r) => r.data)
    expect(checks).toEqual([{ goalId: goal.id, command: 'cat ok.txt', ok: true, exitCode: 0, output: expect.stringContaining('done') }])
    expect(h.scripted.requests[0].system).toContain('The current goal has a check: when update_goal complete is called, `test -f ok.txt`, then `cat ok.txt` runs')
    await expectReplayEqualsLive(agent)
  })

  it('a failing check refuses the completion with the exit code and the output tail; the round goes on and the attempt is recorded', async () => {
    const agent = await setup()
    const goal = h.root.goals.create(agent, { objective: 'Make it pass', verify: ['echo "1 test failed" && exit 3'] })
    h.scripted.push(update(goal, 'complete'), { text: 'Still failing; I keep working.' })
    agent.send(roundOf(goal))
    await agent.whenIdle()
    const refused = toolOutcomes(h, agent)[0]
    expect(refused).toMatchObject({ ok: false, error: { code: 'GOAL_CHECK_FAILED' } })
    expect(refused.content).toMatch(/^The goal was not completed: its check `echo "1 test failed" && exit 3` failed\. It exited with code 3\.\nEnd of its output:\n1 test failed\n/)
    // The model was asked again in the same round (the turn went on), and the goal stays active.
    expect(h.scripted.requests).toHaveLength(2)
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'active', activation: 'armed', verification: { attempts: 1, failures: 1, last: { ok: false, exitCode: 3 } } })
    await expectReplayEqualsLive(agent)
  })

  it('a check that times out is a failure with no exit code; hostile output is masked and clipped', async () => {
    const agent = await setup({ checkTimeoutMs: 300 }, { scrubSecrets: true })
    process.env.CHECK_TEST_API_KEY = 'sk-check-secret-0123456789abcdef'
    const goal = h.root.goals.create(agent, { objective: 'Slow', verify: ['sleep 5'] })
    await completeInRound(agent, goal)
    expect(toolOutcomes(h, agent)[0]).toMatchObject({ ok: false, error: { code: 'GOAL_CHECK_FAILED' }, content: expect.stringMatching(/timed out after 300 ms/) })
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'active', verification: { last: { ok: false, exitCode: null } } })

    // The secret reaches the output only through a file: the environment of the check has none.
    fs.writeFileSync(path.join(h.workspace, 'leak.txt'), `key=${process.env.CHECK_TEST_API_KEY}\n`)
    const edited = h.root.goals.edit(agent, h.root.goals.get(agent)!, { verify: ['printf "\\033[2J[$CHECK_TEST_API_KEY]"; head -c 20000 /dev/zero | tr "\\\\0" x; cat leak.txt; exit 1'] })
    await completeInRound(agent, edited)
    const last = h.root.goals.get(agent)!.verification!
    expect(last).toMatchObject({ attempts: 2, failures: 2, last: { exitCode: 1 } })
    const record = h.records(agent).filter((r) => r.type === 'goal/check').at(-1)!.data as { output: string }
    expect(record.output.length).toBeLessThanOrEqual(2000)
    expect(record.output).toMatch(/key=\S+\n\[Exit code 1 after/)
    expect(toolOutcomes(h, agent).at(-1)!.content).not.toContain('\u001b')
    await h.root.sessions.flush(agent.session)
    expect(fs.readFileSync(agent.session.file, 'utf8')).not.toContain('sk-check-secret-0123456789abcdef')
  })

  it('without run_command the check cannot run, so the completion is refused', async () => {
    const agent = await setup({}, { allowCommands: false })
    const goal = h.root.goals.create(agent, { objective: 'Unverifiable', verify: ['npm test'] })
    await completeInRound(agent, goal)
    expect(toolOutcomes(h, agent)[0]).toMatchObject({ ok: false, content: expect.stringContaining('run_command tool is not loaded') })
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'active' })
  })

  it('get_goal and /goal say a check exists; /goal verify sets and removes it', async () => {
    const agent = await setup()
    const { executeGoalCommand, parseGoalCommand } = await import('../src/index.ts')
    const run = (input: string) => executeGoalCommand(h.root, agent, parseGoalCommand(input)!)
    run('/goal Ship it')
    expect(run('/goal verify npm test -- --run')).toMatchObject({ ok: true, goal: { verify: ['npm test -- --run'] } })
    expect(run('/goal').message).toContain('Check: npm test -- --run')
    h.scripted.push({ toolCalls: [{ name: 'get_goal', arguments: {} }] }, { text: 'ok' })
    agent.send({ content: 'what is the goal?' })
    await agent.whenIdle()
    expect(JSON.parse(toolOutcomes(h, agent)[0].content).goal.check).toEqual({ commands: ['npm test -- --run'], runs_on: 'update_goal complete' })
    expect(userTexts(h.scripted.requests[0].messages)).toEqual(['what is the goal?'])
    expect(run('/goal verify off')).toMatchObject({ ok: true, message: expect.stringMatching(/^Check removed\./) })
    expect(h.root.goals.get(agent)).not.toHaveProperty('verify')
  })
})
