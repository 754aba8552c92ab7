import { execFileSync } from 'node:child_process'
import { expect } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import { foldGoal, type GoalState } from '@goalkeeper/goal'
import { createScriptedProvider, type ModelRequest, type ScriptStep, type ScriptedProvider } from '@goalkeeper/model'
import { createHarness, type Harness } from '@goalkeeper/test-kit'

export interface JudgeSetup {
  h: Harness
  agent: Agent
  /** The judge's model, registered as `judge`: a second scripted provider, so agent and judge are told apart. */
  judge: ScriptedProvider
}

/** The real loop: goal, goal tool, round driver, budgets and the judge, with one agent on the scripted model. */
export async function judgeSetup(config: Record<string, unknown> = {}, options: { budget?: boolean; git?: boolean } = {}): Promise<JudgeSetup> {
  const h = await createHarness()
  try {
    if (options.git) gitInit(h.workspace)
    const judge = createScriptedProvider()
    await h.load({ name: 'judge-model', inject: ['models'], apply: (ctx: any) => { ctx.models.register('judge', judge) } })
    await h.load(await import('@goalkeeper/goal'), {})
    await h.load(await import('@goalkeeper/tool-goal'), {})
    if (options.budget) await h.load(await import('@goalkeeper/goal-budget'), {})
    await h.load(await import('../src/index.ts'), { model: 'judge', ...config })
    const agent = await h.createAgent()
    await h.load(await import('@goalkeeper/goal-session'), {})
    return { h, agent, judge }
  } catch (error) {
    await h.dispose()
    throw error
  }
}

/** The goal folded from the session file equals the live one (its process-local activation aside). */
export async function expectReplayEqualsLive(h: Harness, agent: Agent): Promise<void> {
  await h.root.sessions.flush(agent.session)
  const { activation: _, ...live } = h.root.goals.get(agent)!
  expect(foldGoal(h.readFile(agent))).toEqual(live)
}

export function gitInit(dir: string): void {
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { cwd: dir, stdio: 'pipe' })
  git('init', '-q')
  git('commit', '-q', '--allow-empty', '-m', 'start')
}

/** The agent's call to complete the live goal (read when the step runs, so it names the current revision). */
export const completeStep = (h: Harness, agent: Agent, text = ''): ScriptStep => () => {
  const goal = h.root.goals.get(agent)!
  return { text, toolCalls: [{ name: 'update_goal', arguments: { goal_id: goal.id, revision: goal.revision, action: 'complete' } }] }
}

export const writeStep = (path: string, content: string): ScriptStep => ({ toolCalls: [{ name: 'write_file', arguments: { path, content } }] })

export const verdict = (v: 'met' | 'not-met' | 'cannot-tell', reasons: string[], missing: string[] = []) =>
  ({ text: JSON.stringify({ verdict: v, reasons, missing }), usage: { inputTokens: 300, outputTokens: 40 } })

/** The text of the one user message a judge request carries. */
export function evidenceOf(request: ModelRequest): string {
  const [message] = request.messages
  return message.role === 'user' ? message.content.map((b) => ('text' in b ? b.text : '')).join('') : ''
}

/** The texts of the goal rounds' prompts the agent's model received, in order. */
export function roundPrompts(scripted: ScriptedProvider): string[] {
  const prompts = new Set<string>()
  for (const request of scripted.requests) {
    for (const message of request.messages) {
      if (message.role !== 'user') continue
      const text = message.content.map((b) => ('text' in b ? b.text : '')).join('')
      if (text.startsWith('<goal_round>')) prompts.add(text)
    }
  }
  return [...prompts]
}

export function settled(h: Harness, agent: Agent): Promise<GoalState | undefined> {
  return h.root.goalDriver.whenSettled(agent)
}
