import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import * as goalPlugin from '@goalkeeper/goal'
import type { GoalState } from '@goalkeeper/goal'
import * as goalSession from '@goalkeeper/goal-session'
import * as noProgress from '@goalkeeper/no-progress'
import { call, done, harnessWith, outcomes, pluginMessages, prompt, tools, userTexts, type Harness } from '@goalkeeper/test-kit'

let h: Harness
beforeEach(async () => { h = await harnessWith({ 'a.txt': 'alpha\n' }) })
afterEach(() => h.dispose())

const idle = "I'll keep working on it."
const CHANGED_NOTHING = 'changed nothing (no successful edit, command or goal update call, '
  + 'and no read or search call that found something new)'
const HINT = `No progress: 2 goal rounds in a row ${CHANGED_NOTHING}: `
  + `round 1 ended with text only: "${idle}"; round 2 ended with text only: "${idle}". Do concrete work with tools in this round. `
  + 'If the goal is already reached, verify it and call update_goal with complete; if it cannot be reached, call update_goal with block and say why. '
  + 'After 3 rounds in a row without progress the goal is blocked.'

/** Resolves with the goal once it leaves `active`. */
function settled(agent: Agent): Promise<GoalState> {
  return new Promise((resolve) => {
    const off = h.root.on('goal/changed', (changed, change) => {
      if (changed.id === agent.id && change.goal && change.goal.phase !== 'active') {
        off()
        resolve(h.root.goals.get(agent)!)
      }
    })
  })
}

async function driven(objective = 'summarise a.txt into NOTES.md') {
  await h.load(goalPlugin, {})
  await h.load(goalSession)
  await h.load(noProgress, {})
  const agent = await h.createAgent()
  return { agent, start: () => { const end = settled(agent); h.root.goals.create(agent, { objective }); return end } }
}

/** A goal round sent by hand: the next legal round of the live goal. */
async function round(agent: Agent, script: Parameters<Harness['scripted']['push']>) {
  const goal = h.root.goals.get(agent)!
  h.scripted.push(...script)
  await prompt(agent, `round ${goal.roundsStarted + 1}`, { kind: 'goal', goalId: goal.id, revision: goal.revision, round: goal.roundsStarted + 1 })
}

describe('no-progress across goal rounds', () => {
  it('blocks the goal after 3 rounds in a row that end with text only, with a hint in the third', async () => {
    const { agent, start } = await driven()
    h.scripted.push(done(idle), done(idle), done(idle), done('never requested'))
    const goal = await start()
    await agent.whenIdle()

    expect(h.scripted.requests).toHaveLength(3)
    expect(h.scripted.requests.map((r) => r.system?.includes(HINT))).toEqual([false, false, true])
    // The hint is in the system prompt, not a message: it costs no model call of its own.
    expect(pluginMessages(h.records(agent), 'no-progress')).toEqual([])
    expect(goal.phase).toBe('blocked')
    expect(goal.blockedReason).toEqual({
      code: 'no-progress',
      message: `3 goal rounds in a row ${CHANGED_NOTHING}: `
        + `round 1 ended with text only: "${idle}"; round 2 ended with text only: "${idle}"; round 3 ended with text only: "${idle}".`,
    })
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }, { kind: 'completed' }, { kind: 'aborted', cause: 'policy' }])
  })

  it('counts empty replies and rounds whose calls changed nothing (reads of what was already read, failed commands)', async () => {
    const { agent, start } = await driven()
    h.scripted.push(
      // Round 1 reads a.txt for the first time: new information, so progress.
      tools(call('read_file', { path: 'a.txt' })), done('Read a.txt.'),
      {}, {},
      tools(call('read_file', { path: 'a.txt' }), call('run_command', { command: 'exit 3' })), done('Still checking.'),
    )
    const goal = await start()
    await agent.whenIdle()
    expect(goal.blockedReason?.message).toMatch(
      /: round 2 ended with an empty reply; round 3 ended with an empty reply; round 4 made 2 tool calls that changed nothing and found nothing new, then ended with text only: "Still checking\."\.$/,
    )
  })

  it('stops the last round allowed at its first step that redoes what every idle round did, before its closing reply', async () => {
    const { agent, start } = await driven()
    const reread = () => [tools(call('read_file', { path: 'a.txt' })), done('Still investigating.')]
    h.scripted.push(tools(call('read_file', { path: 'a.txt' })), done('Read a.txt.'), ...reread(), ...reread(), ...reread())
    const goal = await start()
    await agent.whenIdle()
    // Round 4's read is answered; its closing reply is never asked for.
    expect(h.scripted.requests).toHaveLength(7)
    expect(goal.blockedReason).toEqual({
      code: 'no-progress',
      message: `3 goal rounds in a row ${CHANGED_NOTHING}: `
        + 'round 2 made 1 tool call that changed nothing and found nothing new, then ended with text only: "Still investigating."; '
        + 'round 3 made 1 tool call that changed nothing and found nothing new, then ended with text only: "Still investigating."; '
        + 'round 4 redid what each round before it did (the same calls with the same results).',
    })
    expect(outcomes(h.records(agent)).at(-1)).toEqual({ kind: 'aborted', cause: 'policy' })
  })

  it('lets the last round allowed go on when its calls are not what every idle round did', async () => {
    const { agent, start } = await driven()
    h.scripted.push(
      tools(call('read_file', { path: 'a.txt' })), done('Read a.txt.'),
      tools(call('read_file', { path: 'a.txt' })), done('Still investigating.'),
      tools(call('run_command', { command: 'exit 3' })), done('The check fails.'),
      // Round 2 re-read a.txt, round 3 did not: this re-read before the write is not the idle rounds again.
      tools(call('read_file', { path: 'a.txt' })), tools(call('write_file', { path: 'NOTES.md', content: 'alpha' })), done('Wrote the notes.'),
      done(idle), done(idle), done(idle),
    )
    const goal = await start()
    await agent.whenIdle()
    expect(h.scripted.remaining).toBe(0)
    expect(goal.blockedReason?.message).toMatch(/^3 goal rounds in a row .*: round 5 .*; round 6 .*; round 7 ended with text only/)
  })

  it('a read or search that finds something new is progress; one that finds nothing, or what was already seen, is not', async () => {
    const { agent, start } = await driven()
    h.scripted.push(
      tools(call('read_file', { path: 'a.txt' })), done('Read a.txt.'),
      tools(call('search', { pattern: 'nowhere-to-be-found' })), done('Nothing there.'),
      tools(call('read_file', { path: 'a.txt' }), call('list_dir', {})), done('Listed.'),
      tools(call('read_file', { path: 'a.txt' })), done('Read it again.'),
      tools(call('search', { pattern: 'also-not-there' })), done('Nothing.'),
      done(idle), done('never requested'),
    )
    const goal = await start()
    await agent.whenIdle()
    // Round 3's listing was new; rounds 2, 4 and 5 found nothing new, and round 6 only talked.
    expect(goal.roundsStarted).toBe(6)
    expect(goal.blockedReason?.message).toMatch(/: round 4 made 1 tool call that changed nothing and found nothing new, then ended with text only: "Read it again\."; round 5 .*; round 6 ended with text only/)
    expect(h.scripted.requests.at(-1)!.system).toContain('No progress: 2 goal rounds in a row')
  })

  it('a successful write, command or goal update is progress: the count starts over', async () => {
    const { agent, start } = await driven()
    h.scripted.push(
      done(idle), done(idle),
      tools(call('write_file', { path: 'NOTES.md', content: 'alpha' })), done('Wrote the notes.'),
      done(idle), done(idle),
      tools(call('run_command', { command: 'cat NOTES.md' })), done('Checked.'),
      done(idle), done(idle), done(idle),
    )
    const goal = await start()
    await agent.whenIdle()
    expect(h.scripted.remaining).toBe(0)
    expect(goal.blockedReason?.code).toBe('no-progress')
    // Rounds 3 and 6 made progress (a write, a command) with the hint in their first request's system prompt,
    // which the progress took away again; round 9 had it too, and stayed idle.
    expect(goal.blockedReason?.message).toMatch(/^3 goal rounds in a row .*: round 7 .*; round 8 .*; round 9 ended with text only/)
    expect(h.scripted.requests.map((r, i) => (r.system?.includes('No progress: 2 goal rounds') ? i + 1 : 0)).filter(Boolean)).toEqual([3, 7, 11])
  })
})

describe('no-progress and what tools say of themselves', () => {
  it("judges a plugin's tools by their declared kind: an edit is progress, a session tool that only reports is not", async () => {
    const { agent, start } = await driven()
    let asked = 0
    // A status answer is new every time, and still no progress: the tool says its calls change nothing.
    h.root.tools.register({ name: 'status', kind: 'session', readOnly: true, description: 'status', parameters: { type: 'object' }, execute: () => `status ${++asked}` })
    h.root.tools.register({ name: 'stamp', kind: 'edit', description: 'stamps', parameters: { type: 'object' }, execute: () => 'stamped' })
    const reported = () => [tools(call('status', {})), done(idle)]
    h.scripted.push(...reported(), ...reported(), tools(call('stamp', {})), done('Stamped.'), ...reported(), ...reported(), ...reported(), done('never requested'))
    const goal = await start()
    await agent.whenIdle()
    expect(goal.roundsStarted).toBe(6)
    expect(goal.blockedReason?.message).toMatch(/^3 goal rounds in a row .*: round 4 made 1 tool call that changed nothing and found nothing new, then ended with text only: .*; round 6 /)
  })

  it('names configured tools in its messages next to the kinds, and counts them whatever their kind', async () => {
    await h.load(goalPlugin, {})
    await h.load(goalSession)
    await h.load(noProgress, { progressKinds: [], progressTools: ['deploy_*'] })
    h.root.tools.register({ name: 'deploy_site', description: 'deploys', parameters: { type: 'object' }, execute: () => 'deployed' })
    const agent = await h.createAgent()
    const end = settled(agent)
    h.scripted.push(done(idle), tools(call('deploy_site', {})), done('Deployed.'), done(idle), tools(call('write_file', { path: 'x.txt', content: 'x' })), done(idle), done(idle))
    h.root.goals.create(agent, { objective: 'ship it' })
    const goal = await end
    await agent.whenIdle()
    // The write is no progress here (no kinds count); the deploy is, by its name.
    expect(goal.roundsStarted).toBe(5)
    expect(goal.blockedReason?.message).toMatch(/^3 goal rounds in a row changed nothing \(no successful deploy_\* call, and no read or search call that found something new\): round 3 /)
  })
})

describe('no-progress resets', () => {
  it('does not reset on a human message: a human turn between rounds leaves the count as it was', async () => {
    await h.load(goalPlugin, {})
    await h.load(noProgress, {})
    const agent = await h.createAgent()
    h.root.goals.create(agent, { objective: 'summarise a.txt' })
    await round(agent, [done(idle)])
    h.scripted.push(done('Hello!'))
    await prompt(agent, 'how is it going?')
    await round(agent, [done(idle)])
    // A human turn is no round: the hint is only in goal rounds' system prompts.
    h.scripted.push(done('Nothing new.'))
    await prompt(agent, 'anything new?')
    expect(h.scripted.requests.at(-1)!.system).not.toContain('No progress')
    await round(agent, [done(idle)])
    expect(h.scripted.requests.at(-1)!.system).toContain('No progress: 2 goal rounds')
    expect(h.root.goals.get(agent)!.blockedReason?.code).toBe('no-progress')
  })

  it('starts over when a human re-arms the goal (/goal resume)', async () => {
    await h.load(goalPlugin, {})
    await h.load(noProgress, {})
    const agent = await h.createAgent()
    let goal = h.root.goals.create(agent, { objective: 'summarise a.txt' })
    await round(agent, [done(idle)])
    await round(agent, [done(idle)])
    goal = h.root.goals.pause(agent, { id: goal.id, revision: goal.revision })
    h.root.goals.resume(agent, { id: goal.id, revision: goal.revision })
    await round(agent, [done(idle)])
    expect(h.scripted.requests.at(-1)!.system).not.toContain('No progress')
    await round(agent, [done(idle)])
    expect(h.root.goals.get(agent)!.phase).toBe('active')
  })

  it('starts over on a continue verdict, which steers its guidance', async () => {
    h.root.on('policy/escalate', () => ({ action: 'continue', guidance: 'Write NOTES.md now.' }))
    await h.load(goalPlugin, {})
    await h.load(noProgress, {})
    const agent = await h.createAgent()
    h.root.goals.create(agent, { objective: 'summarise a.txt' })
    await round(agent, [done(idle)])
    await round(agent, [done(idle)])
    await round(agent, [done(idle), done('On it.')])
    expect(userTexts(h.scripted.requests.at(-1)!).at(-1)).toBe('Write NOTES.md now.')
    await round(agent, [done(idle)])
    await round(agent, [done(idle)])
    expect(h.root.goals.get(agent)!.phase).toBe('active')
    expect(outcomes(h.records(agent))).toEqual(Array(5).fill({ kind: 'completed' }))
  })
})
