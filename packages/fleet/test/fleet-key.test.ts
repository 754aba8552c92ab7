import { createHmac, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT } from '@goalkeeper/test-kit'
import { command, listQueue, submit, useFleet, worker } from './helpers.ts'

const fleet = useFleet()

// The id as the fleet stores it, computed here apart from the code under test.
const keyId = (hex: string) => createHmac('sha256', Buffer.from(hex, 'hex')).update('\ngoalkeeper-key-id-v1').digest('hex').slice(0, 16)

describe('one key per fleet', () => {
  it('a worker with another key is refused before it takes a job, naming both keys; the queue is untouched; submit, queue, sessions and show with that key are refused alike', async () => {
    // The first worker records the fleet's key.
    const first = worker(fleet, ['--name', 'w-first'])
    await first.waitFor('stderr', /worker w-first: 1 at once/)
    first.child.kill('SIGTERM')
    expect(await first.exit).toBe(0)

    const repo = await fleet.repo('keyed')
    const id = await submit(fleet, 'Write result.txt for goal-1', repo)
    const other = randomBytes(32).toString('hex')
    const refused = await command(fleet, ['worker', '--name', 'w-other'], { GOALKEEPER_SESSION_KEY: other })
    expect(refused.code).toBe(64)
    expect(refused.stderr.trim().split('\n')).toEqual([
      `goalkeeper: this worker signs with key ${keyId(other)} (the key setting of the session plugin) but the fleet's sessions are signed with key ${keyId(fleet.key)} (the key setting of the session plugin, first used by worker w-first); no job taken (hint: give every worker and submitter of this database the same session key (GOALKEEPER_SESSION_KEY or a shared keyFile))`,
    ])
    expect(refused.stderr).not.toMatch(new RegExp(`goal ${id}`))
    expect(refused.stderr).not.toContain(other)
    const [goal] = (await listQueue(fleet)).filter((item) => item.id === id)
    expect(goal).toMatchObject({ state: 'queued', worker: null, attempts: 0, rounds: null })

    // The job is whole: a worker with the fleet's key runs it.
    const right = worker(fleet, ['--name', 'w-right'])
    await right.waitFor('stderr', new RegExp(`goal ${id} done: complete`))
    right.child.kill('SIGTERM')
    expect(await right.exit).toBe(0)

    // Submitters and readers of the fleet's database hold their key against the fleet's too, before they act.
    const { sessionId } = (await listQueue(fleet)).find((item) => item.id === id)
    const refusal = (consequence: string) =>
      `goalkeeper: this command's session key is ${keyId(other)} (the key setting of the session plugin) but the fleet's sessions are signed with key ${keyId(fleet.key)} (the key setting of the session plugin, first used by worker w-first); ${consequence} (hint: give every worker and submitter of this database the same session key (GOALKEEPER_SESSION_KEY or a shared keyFile))`
    const commands: [string[], string][] = [
      [['submit', 'Write result.txt for goal-2', '--repo', repo], 'nothing submitted'],
      [['queue'], 'nothing listed'],
      [['sessions', '--database', fleet.url, '--all'], 'no session read'],
      [['show', sessionId, '--database', fleet.url], 'no session read'],
    ]
    for (const [args, consequence] of commands) {
      const result = await command(fleet, args, { GOALKEEPER_SESSION_KEY: other })
      expect([args[0], result.code, result.stdout, result.stderr.trim().split('\n')]).toEqual([args[0], 64, '', [refusal(consequence)]])
      expect(result.stderr).not.toContain(other)
    }
    expect((await listQueue(fleet)).map((item) => item.id)).toEqual([id])
    // With the fleet's key the same commands read the session, which verifies.
    const own = await command(fleet, ['sessions', '--database', fleet.url, '--all'], { COLUMNS: '400' })
    expect(own.code, own.stderr).toBe(0)
    expect(own.stdout.split('\n').find((line) => line.startsWith(sessionId))).not.toMatch(/!|other key/)
    const shown = await command(fleet, ['show', sessionId, '--database', fleet.url])
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).not.toMatch(/^!!/m)
  }, CLI_TIMEOUT)
})
