import { createHmac, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT } from '@goalkeeper/test-kit'
import { command, listQueue, submit, useFleet, worker } from './helpers.ts'

const fleet = useFleet()

// The id as the fleet stores it, computed here apart from the code under test.
const keyId = (hex: string) => createHmac('sha256', Buffer.from(hex, 'hex')).update('\ngoalkeeper-key-id-v1').digest('hex').slice(0, 16)

describe('one key per fleet', () => {
  it('a worker with another key is refused before it takes a job, naming both keys; the queue is untouched; its sessions read with that key say signed with another key', async () => {
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

    // Read with another key, the session says so, naming both key ids, rather than calling it tampered.
    const { sessionId } = (await listQueue(fleet)).find((item) => item.id === id)
    const byOther = { GOALKEEPER_SESSION_KEY: other, COLUMNS: '400' }
    const listing = await command(fleet, ['sessions', '--database', fleet.url, '--all'], byOther)
    expect(listing.code).toBe(0)
    const row = listing.stdout.split('\n').find((line) => line.startsWith(sessionId))
    expect(row).toMatch(new RegExp(`^${sessionId} ! .* other key .* signed with another key: .*:1: line is signed with another key: key id ${keyId(fleet.key)}, not this key's ${keyId(other)}`))
    expect(row).not.toMatch(/tampered/)
    expect(listing.stderr).toMatch(/1 session marked ! was signed with another key than this machine's/)
    expect(listing.stderr).not.toMatch(/changed by someone other than goalkeeper/)
    const shown = await command(fleet, ['show', sessionId, '--database', fleet.url], byOther)
    expect(shown.stdout).toContain(`!! SIGNED WITH ANOTHER KEY: `)
    expect(shown.stdout).toContain(`key id ${keyId(fleet.key)}, not this key's ${keyId(other)}`)
    expect(shown.stdout).not.toMatch(/TAMPERED/)
    // With the fleet's key the same session verifies: the wording is about the key, not the log.
    const own = await command(fleet, ['sessions', '--database', fleet.url, '--all'])
    expect(own.stdout.split('\n').find((line) => line.startsWith(sessionId))).not.toMatch(/!|other key/)
  }, CLI_TIMEOUT)
})
