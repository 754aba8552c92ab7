// The completion judge, measured: one scripted goal whose agent claims completion early twice (once after a
// draft, once without changing anything) before it does the work. Run through the real loop (goal, goal
// tool, round driver, budgets, workspace tools; only the models are scripted), once without a judge and once
// with one. Prints, for each, the rounds and tokens to completion (the agent's and the judge's) and whether the
// objective was met when the goal said "complete". Run alone: node --import tsx bench/judge.bench.ts
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { createHarness } from '@goalkeeper/test-kit'
import { createScriptedProvider, type ModelRequest, type ScriptResponse } from '@goalkeeper/model'
import type { Agent } from '@goalkeeper/agent-loop'

const AGENT_USAGE = { inputTokens: 2000, outputTokens: 150 }
const JUDGE_USAGE = { inputTokens: 600, outputTokens: 60 }

const textOf = (message: ModelRequest['messages'][number]) => (message.role === 'user' ? message.content.map((b) => ('text' in b ? b.text : '')).join('') : '')

/** The agent: round 1 writes a draft and claims completion, round 2 claims it again, round 3 does the work. */
function agentStep(root: any, agent: Agent) {
  return (request: ModelRequest): ScriptResponse => {
    const last = request.messages.at(-1)!
    const complete = (): ScriptResponse => {
      const goal = root.goals.get(agent)
      return { toolCalls: [{ name: 'update_goal', arguments: { goal_id: goal.id, revision: goal.revision, action: 'complete' } }], text: 'done.txt is written; the goal is met.', usage: AGENT_USAGE }
    }
    if (last.role === 'tool') {
      if (last.name === 'write_file') return complete()
      return { text: last.ok ? 'Done.' : 'Not accepted; I continue next round.', usage: AGENT_USAGE }
    }
    const text = textOf(last)
    if (!text.startsWith('<goal_round>')) return { text: 'Done.', usage: AGENT_USAGE }
    const round = Number(/Round: (\d+)\//.exec(text)![1])
    if (round === 2) return complete()
    return { toolCalls: [{ name: 'write_file', arguments: { path: 'done.txt', content: round === 1 ? 'draft\n' : 'ok\n' } }], usage: AGENT_USAGE }
  }
}

/** The judge: met only when the named file says ok. */
function judgeStep(request: ModelRequest): ScriptResponse {
  const met = /- done\.txt\n<<<\nok\n/.test(textOf(request.messages[0]))
  return { text: JSON.stringify(met ? { verdict: 'met', reasons: ['done.txt says ok.'], missing: [] } : { verdict: 'not-met', reasons: ['done.txt does not say ok.'], missing: ['done.txt with ok'] }), usage: JUDGE_USAGE }
}

async function measure(withJudge: boolean) {
  const h = await createHarness()
  try {
    const judge = createScriptedProvider()
    await h.load({ name: 'judge-model', inject: ['models'], apply: (ctx: any) => { ctx.models.register('judge', judge) } })
    await h.load(await import('@goalkeeper/goal'), {})
    await h.load(await import('@goalkeeper/tool-goal'), {})
    await h.load(await import('@goalkeeper/goal-budget'), {})
    if (withJudge) await h.load(await import('@goalkeeper/goal-judge'), { model: 'judge' })
    const agent = await h.createAgent()
    await h.load(await import('@goalkeeper/goal-session'), {})
    for (let i = 0; i < 20; i++) {
      h.scripted.push(agentStep(h.root, agent))
      judge.push(judgeStep)
    }
    h.root.goals.create(agent, { objective: 'Write done.txt containing ok', maxGoalRounds: 10 })
    const goal = await h.root.goalDriver.whenSettled(agent)
    const judgeTokens = judge.requests.length * (JUDGE_USAGE.inputTokens + JUDGE_USAGE.outputTokens)
    const met = fs.readFileSync(path.join(h.workspace, 'done.txt'), 'utf8') === 'ok\n'
    return { phase: goal?.phase, rounds: goal?.roundsStarted, tokens: goal?.spent?.tokens ?? 0, judgeTokens, agentCalls: h.scripted.requests.length, judgeCalls: judge.requests.length, met }
  } finally {
    await h.dispose()
  }
}

export async function run(): Promise<void> {
  console.log('judge: a goal whose agent claims completion early twice')
  console.log('| run | goal | rounds | agent calls | judge calls | tokens (judge part) | objective met |')
  console.log('|---|---|---|---|---|---|---|')
  for (const withJudge of [false, true]) {
    const r = await measure(withJudge)
    console.log(`| ${withJudge ? 'with judge' : 'without judge'} | ${r.phase} | ${r.rounds} | ${r.agentCalls} | ${r.judgeCalls} | ${r.tokens} (${r.judgeTokens}) | ${r.met ? 'yes' : 'no'} |`)
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run()
