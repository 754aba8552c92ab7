// A goal round whose model stream drops after output began: the round's call is made once more and the
// goal goes on, instead of being blocked `turn-error` at the first dropped connection.
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isRecordOf } from '@goalkeeper/session'
import { composeFromYml, coreEntries, type Composition, type ProjectPaths } from './compose.ts'

const SCRIPT = `
export default [
  { toolCalls: [{ name: 'create_goal', arguments: { objective: 'Say hello twice', max_rounds: 2 } }] },
  { text: 'Goal created.' },
  { kind: 'error', code: 'TRANSPORT', message: 'connection reset', text: 'Hel' },
  { text: 'Hello (round 1).' },
  { text: 'Hello (round 2).' },
]
`

let app: Composition
beforeEach(async () => { app = await composeFromYml(composition, { 'script.mjs': SCRIPT }) })
afterEach(() => app.dispose())

function composition(paths: ProjectPaths) {
  return `${coreEntries(paths, { scripted: { module: path.join(paths.dir, 'script.mjs') } })}- id: goal-session
  name: '@goalkeeper/goal-session'
`
}

describe('a dropped stream in a goal round', () => {
  it('retries the call once, records the partial answer as such, and the goal runs on', async () => {
    const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
    const ended = new Promise<void>((resolve) => {
      const off = app.root.on('goal/changed', () => {
        if (app.root.goals.get(agent)?.phase === 'active') return
        off()
        resolve()
      })
    })
    agent.send({ content: 'Make this a goal' })
    await ended
    await agent.whenIdle()
    expect(app.root.goals.get(agent)).toMatchObject({ phase: 'blocked', roundsStarted: 2, blockedReason: { code: 'round-limit' } })
    const records = await app.readLog(agent)
    const partial = records.filter((record) => isRecordOf(record, 'assistant/message') && record.data.partial)
    expect(partial.map((record) => record.data)).toEqual([expect.objectContaining({ text: 'Hel', partial: true, error: { code: 'TRANSPORT', message: 'connection reset' } })])
    expect(app.errors).toEqual([])
  })
})
