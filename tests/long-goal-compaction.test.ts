// A goal of 200 rounds on a model with a small context window: every answer is large, so the history
// passes the window many times over, and compaction keeps every request under it with the objective in it.
// Composed from cordis.yml by the real loader; only the model is scripted (its window set in the yml).
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { COMPACTION_INSTRUCTION, estimateRequest, replayHistory } from '@goalkeeper/agent-loop'
import type { ScriptedProvider } from '@goalkeeper/model'
import { isRecordOf, type ContextCompactionData } from '@goalkeeper/session'
import { composeFromYml, coreEntries, type Composition, type ProjectPaths } from './compose.ts'

const OBJECTIVE = 'Keep a long-running log of observations about the workspace'
const WINDOW = 8000
const ROUNDS = 200

/** One function answers every request: the summary calls, the goal's creation, and each round's large answer. */
const SCRIPT = `
const OBJECTIVE = ${JSON.stringify(OBJECTIVE)}
const answer = (request) => {
  if (request.system === ${JSON.stringify(COMPACTION_INSTRUCTION)}) return { text: 'Rounds so far each wrote a long observation; nothing else changed.' }
  const last = request.messages.at(-1)
  if (last.role === 'user' && last.content[0].text.startsWith('Make this a goal')) {
    return { toolCalls: [{ name: 'create_goal', arguments: { objective: OBJECTIVE, max_rounds: ${ROUNDS} } }] }
  }
  if (last.role === 'tool') return { text: 'Goal created.' }
  const round = /Round: (\\d+)/.exec(last.content[0].text)?.[1] ?? '?'
  return { text: 'Observation of round ' + round + ': ' + 'lorem ipsum dolor sit amet '.repeat(230) }
}
export default Array.from({ length: ${ROUNDS * 2 + 100} }, () => answer)
`

let app: Composition
beforeEach(async () => { app = await composeFromYml(composition, { 'script.mjs': SCRIPT }) })
afterEach(() => app.dispose())

function composition(paths: ProjectPaths) {
  return `${coreEntries(paths, { scripted: { module: path.join(paths.dir, 'script.mjs'), contextWindow: WINDOW } })}- id: goal-session
  name: '@goalkeeper/goal-session'
`
}

describe('a long goal on a small context window', () => {
  it(`runs ${ROUNDS} rounds of large answers with every request under the window and the objective in each`, async () => {
    const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
    const ended = new Promise<void>((resolve) => {
      const off = app.root.on('goal/changed', () => {
        if (app.root.goals.get(agent)?.phase !== 'blocked') return
        off()
        resolve()
      })
    })
    agent.send({ content: 'Make this a goal please' })
    await ended
    await agent.whenIdle()

    const goal = app.root.goals.get(agent)!
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: ROUNDS, blockedReason: { code: 'round-limit' } })
    const requests = (app.root.models.get('scripted') as ScriptedProvider).requests
    const work = requests.filter((request) => request.system !== COMPACTION_INSTRUCTION)
    expect(work.length).toBe(ROUNDS + 2)
    let largest = 0
    for (const [index, request] of work.entries()) {
      const estimate = estimateRequest(request)
      largest = Math.max(largest, estimate)
      expect(estimate, `request ${index}`).toBeLessThanOrEqual(0.8 * WINDOW)
      // Measured without the estimator too: the whole request as JSON, 4 characters a token.
      expect(JSON.stringify(request).length / 4, `request ${index}`).toBeLessThan(WINDOW)
      if (index >= 2) expect(JSON.stringify(request.messages), `request ${index}`).toContain(OBJECTIVE)
    }
    for (const request of requests) expect(JSON.stringify(request).length / 4).toBeLessThan(WINDOW)

    const records = await app.readLog(agent)
    const compactions = records.filter((record) => isRecordOf(record, 'context/compacted')).map((record) => record.data as ContextCompactionData)
    expect(compactions.length).toBeGreaterThan(ROUNDS / 10)
    expect(compactions.every((data) => data.method === 'summary' && data.tokensAfter < data.tokensBefore)).toBe(true)
    // The log on disk replays to the history of the last request plus its answer.
    const replayed = replayHistory(records)
    expect(replayed.slice(0, -1)).toEqual(work.at(-1)!.messages)
    expect(app.errors).toEqual([])
    // Reported by the test run, so the figures in the README can be checked.
    console.log(`rounds ${ROUNDS}, requests ${requests.length}, compactions ${compactions.length}, largest request ~${largest} tokens of ${WINDOW}`)
  }, 120_000)
})
