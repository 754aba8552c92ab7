// Goal rounds that end at the step limit go on to the next round (DESIGN.md section 9.7); the policy
// plugins of the default composition still see them: their counts carry across such rounds, and
// no-progress counts a step-limit round that changed nothing as an idle round.
import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import type { GoalState } from '@goalkeeper/goal'
import type { ScriptedProvider, ScriptResponse } from '@goalkeeper/model'
import { composeFromYml, defaultPolicies, type Composition } from './compose.ts'

let app: Composition | undefined
afterEach(() => app?.dispose())

const files = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`workspace/f${i + 1}.txt`, `file ${i + 1}\n`]))
const read = (file: string): ScriptResponse => ({ toolCalls: [{ name: 'read_file', arguments: { path: file } }] })
/** A search for a pattern no file holds: a new call each time that finds nothing, so it is no progress. */
const searchNothing = (n: number): ScriptResponse => ({ toolCalls: [{ name: 'search', arguments: { pattern: `missing-token-${n}` } }] })

function untilStopped(agent: Agent): Promise<GoalState | undefined> {
  return new Promise((resolve) => {
    const check = () => {
      const goal = app!.root.goals.get(agent)
      if (goal?.phase === 'active' && goal.activation === 'armed') return
      off()
      void agent.whenIdle().then(() => resolve(app!.root.goals.get(agent)))
    }
    const off = app!.root.on('goal/changed', check)
  })
}

async function start(steps: ScriptResponse[]): Promise<{ agent: Agent; scripted: ScriptedProvider }> {
  app = await composeFromYml(defaultPolicies, files)
  const scripted = app.root.models.get('scripted') as ScriptedProvider
  scripted.push(...steps)
  const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace, maxSteps: 3 })
  return { agent, scripted }
}

const turnEnds = async (agent: Agent) => (await app!.readLog(agent)).filter((r) => r.type === 'turn/end').map((r) => (r.data as any).outcome.code ?? (r.data as any).outcome.kind)

describe('guards across step-limit rounds', () => {
  it('loop-guard counts a repeat across rounds that end at the step limit, and stops the goal in round 2', async () => {
    const { agent } = await start(Array.from({ length: 30 }, () => read('f1.txt')))
    const stopped = untilStopped(agent)
    app!.root.goals.create(agent, { objective: 'Read f1 until done', maxGoalRounds: 10 })
    const goal = await stopped
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 2, blockedReason: { code: 'repeated-tool-call' } })
    expect(await turnEnds(agent)).toEqual(['MAX_STEPS', 'aborted'])
    expect(app!.errors).toEqual([])
  })

  it('no-progress blocks the goal after 3 step-limit rounds in a row that changed nothing and found nothing new', async () => {
    const { agent, scripted } = await start(Array.from({ length: 12 }, (_, i) => searchNothing(i + 1)))
    const stopped = untilStopped(agent)
    app!.root.goals.create(agent, { objective: 'Read everything', maxGoalRounds: 10 })
    const goal = await stopped
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 3, blockedReason: { code: 'no-progress' } })
    expect(goal!.blockedReason!.message).toMatch(/^3 goal rounds in a row changed nothing .*round 1 made 3 tool calls that changed nothing and found nothing new, then reached the step limit; round 2 .*; round 3 made 3 tool calls that changed nothing and found nothing new, then reached the step limit\./)
    expect(await turnEnds(agent)).toEqual(['MAX_STEPS', 'MAX_STEPS', 'MAX_STEPS'])
    // The third round was told, in its system prompt, that the goal is blocked after 3 rounds without progress.
    expect(scripted.requests[6].system).toContain('After 3 rounds in a row without progress the goal is blocked.')
    expect(scripted.requests).toHaveLength(9)
    expect(app!.errors).toEqual([])
  })

  it('step-limit rounds that each read files new to the goal are progress, and go on', async () => {
    const { agent } = await start([...Array.from({ length: 12 }, (_, i) => read(`f${i + 1}.txt`)), { text: 'All twelve read.' }])
    const stopped = untilStopped(agent)
    app!.root.goals.create(agent, { objective: 'Read everything', maxGoalRounds: 5 })
    const goal = await stopped
    // Four step-limit rounds of new reads, then a fifth round that ends with text: the round cap, never no-progress.
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 5, blockedReason: { code: 'round-limit' } })
    expect(await turnEnds(agent)).toEqual(['MAX_STEPS', 'MAX_STEPS', 'MAX_STEPS', 'MAX_STEPS', 'completed'])
    expect(app!.errors).toEqual([])
  })
})
