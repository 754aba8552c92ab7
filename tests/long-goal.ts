// What the long-goal tests share: one prompt makes a goal of many rounds, and every round answers with a long
// observation, so the history passes a small context window over and over (compactions) and the log grows
// by several kilobytes a round (checkpoints, maxSessionBytes). Composed by the real loader (./compose.ts).
import path from 'node:path'
import { COMPACTION_INSTRUCTION, type Agent } from '@goalkeeper/agent-loop'
import { untilGoal } from '@goalkeeper/test-kit'
import { coreEntries, type Composition, type ProjectPaths } from './compose.ts'

export const OBJECTIVE = 'Keep a long-running log of observations about the workspace'

/**
 * The model module (`script.mjs`) of a goal of `rounds` rounds: the goal from the first prompt, then a large
 * answer, metered, each round; `answers` of them in all (each round's, the summaries', and to spare).
 */
export function longGoalScript(rounds: number, answers: number): string {
  return `
const answer = (request) => {
  if (request.system === ${JSON.stringify(COMPACTION_INSTRUCTION)}) return { text: 'Rounds so far each wrote a long observation.' }
  const last = request.messages.at(-1)
  if (last.role === 'user' && last.content[0].text.startsWith('Make this a goal')) {
    return { toolCalls: [{ name: 'create_goal', arguments: { objective: ${JSON.stringify(OBJECTIVE)}, max_rounds: ${rounds} } }] }
  }
  if (last.role === 'tool') return { text: 'Goal created.' }
  return { text: 'Observation: ' + 'lorem ipsum dolor sit amet '.repeat(230), usage: { inputTokens: 100, outputTokens: 50 } }
}
export default Array.from({ length: ${answers} }, () => answer)
`
}

/**
 * The core entries on that script with an 8,000-token window, the session service with `session` (its
 * config as a yml flow map), PostgreSQL at `database` in place of files when given, and the goal's rounds
 * and budget.
 */
export function longGoalYml(paths: ProjectPaths, { session, database }: { session: string; database?: string }): string {
  let core = coreEntries(paths, { scripted: { module: path.join(paths.dir, 'script.mjs'), contextWindow: 8000 } })
  if (database) core = core.replace(/name: '@goalkeeper\/session-jsonl'\n  config: .*\n/, `name: '@goalkeeper/session-postgres'\n  config: { url: ${JSON.stringify(database)} }\n`)
  return `${core.replace("name: '@goalkeeper/session'\n", `name: '@goalkeeper/session'\n  config: ${session}\n`)}- id: goal-session
  name: '@goalkeeper/goal-session'
- id: goal-budget
  name: '@goalkeeper/goal-budget'
`
}

/**
 * A new agent asked to make the goal; resolves once the goal is blocked (its round limit) and the agent is
 * idle. `watch` gets the agent before the prompt is sent.
 */
export async function runLongGoal(app: Composition, watch?: (agent: Agent) => void): Promise<Agent> {
  const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
  watch?.(agent)
  const ended = untilGoal(app.root, agent, (goal) => goal?.phase === 'blocked')
  agent.send({ content: 'Make this a goal please' })
  await ended
  await agent.whenIdle()
  return agent
}
