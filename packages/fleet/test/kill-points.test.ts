// A worker SIGKILLed at every point of a round: before the round writes, after it wrote, while its push is
// held by a slow pre-receive hook (the push then refused, or landed after the death), after the push landed
// but before it was recorded (a slow post-receive hook), after the push was recorded, and while the push of
// the round that completed the goal is held (then refused). Another worker
// takes each goal over; the branch must then hold every turn the session still calls done, file for file,
// and the goal completes with all its work on the branch.
import { execFileSync } from 'node:child_process'
import { chmod, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { CLI_TIMEOUT, fileMatches } from '@goalkeeper/test-kit'
import { listQueue, queueGoals, readSessions, useFleet, worker } from './helpers.ts'

// One worker composes seven goals at once: on a loaded machine its heartbeats can stall for seconds, so a
// job expires after 15 s of silence rather than 3 (the SIGKILLed worker's jobs are released by that expiry).
const fleet = useFleet({ script: fileURLToPath(new URL('./kill-script.mjs', import.meta.url)), fleet: { expireSeconds: 15 } })

type Point = 'before-write' | 'after-write' | 'push-refused' | 'push-landed' | 'after-push' | 'after-record' | 'complete-push'
const POINTS: Point[] = ['before-write', 'after-write', 'push-refused', 'push-landed', 'after-push', 'after-record', 'complete-push']

/**
 * A `kind` hook that holds the push of `round` until the test answers at a named pipe: `reached()` resolves once
 * the push waits there (the pushed commit in the file), `answered` the answer once the hook let the push go (`yes`) or
 * refused it. Only the first such push is held.
 */
async function holdRound(bare: string, kind: 'pre-receive' | 'post-receive', round: number) {
  const gate = `${bare}/${kind}.gate`
  execFileSync('mkfifo', [gate])
  await writeFile(`${bare}/hooks/${kind}`, `#!/bin/sh
while read old new ref; do
  if [ -p '${gate}' ] && git log -1 --format=%s "$new" | grep -q ' round ${round} '; then
    echo "$new" > '${gate}.reached'
    read answer < '${gate}'
    rm -f '${gate}'
    echo "$answer" > '${gate}.answered'
    [ "$answer" = yes ] || exit 1
  fi
done
exit 0
`)
  await chmod(`${bare}/hooks/${kind}`, 0o755)
  return {
    // A function: the wait's limit starts when the worker does, not when the hook is written.
    reached: () => fileMatches(`${gate}.reached`, /^[0-9a-f]{40}$/m),
    answer: (yes: boolean) => writeFile(gate, yes ? 'yes\n' : 'no\n'),
    answered: () => fileMatches(`${gate}.answered`, /^(yes|no)$/m),
  }
}

/** The files of `branch` and their text. */
function branchFiles(bare: string, branch: string): Record<string, string> {
  const git = (...args: string[]) => execFileSync('git', ['--git-dir', bare, ...args], { encoding: 'utf8' })
  const names = git('ls-tree', '-r', '--name-only', branch).split('\n').filter(Boolean)
  return Object.fromEntries(names.map((name) => [name, git('show', `${branch}:${name}`)]))
}

/**
 * What the session says the workspace holds: README.md of the seed commit, then every write_file that
 * succeeded in a turn that ended and that no fleet/rewind marked lost, in order.
 */
function filesTheSessionCallsDone(records: { type: string; data: any }[], name: string): Record<string, string> {
  const lost = new Set(records.filter((record) => record.type === 'fleet/rewind').flatMap((record) => record.data.lostTurns as number[]))
  const ended = new Set(records.filter((record) => record.type === 'turn/end').map((record) => record.data.turn as number))
  const calls = new Map(records.filter((record) => record.type === 'tool/call' && record.data.name === 'write_file').map((record) => [record.data.callId, record.data]))
  const files: Record<string, string> = { 'README.md': `# ${name}\n` }
  for (const record of records) {
    const call = record.type === 'tool/result' && record.data.ok ? calls.get(record.data.callId) : undefined
    if (!call || lost.has(call.turn) || !ended.has(call.turn)) continue
    const { path, content } = JSON.parse(call.arguments)
    files[path] = content
  }
  return files
}

it('a worker killed at every point of a round: the worker taking over works on exactly what the session records, and the branch holds every turn it calls done', async () => {
  // One submit after another, in this process: the first creates the queue's tables (creating them at
  // once is the database-resilience part of the fleet, tested with it); the CLI's submit is cli-fleet's.
  const goals = []
  for (const [index, point] of POINTS.entries()) {
    const name = `kill-${index + 1}`
    const url = await fleet.repo(name)
    const bare = fileURLToPath(url)
    const gate = point === 'push-refused' || point === 'push-landed' ? await holdRound(bare, 'pre-receive', 2)
      : point === 'after-push' ? await holdRound(bare, 'post-receive', 2)
      : point === 'complete-push' ? await holdRound(bare, 'pre-receive', 3) : undefined
    const [{ id }] = await queueGoals(fleet, [{ objective: `Write result.txt and notes.txt for goal-${index + 1} (hold:${point})`, repo: url, maxRounds: 8 }])
    goals.push({ point, name, goal: `goal-${index + 1}`, url, bare, gate, id: id! })
  }

  const doomed = worker(fleet, ['--name', 'doomed', '--concurrency', String(POINTS.length)], { FLEET_HOLD: '1' })
  // Every goal at its point at once: the script's holds say so on stderr, the hooks in their repositories.
  await Promise.all(goals.map(({ point, goal, gate }) => (gate ? gate.reached() : doomed.waitFor('stderr', new RegExp(`script: holding ${point} of ${goal}\\n`)))))
  doomed.child.kill('SIGKILL')
  await doomed.exit
  // The pushes the dead worker left under way end before anyone takes over: refused, or landed unrecorded.
  for (const { point, gate } of goals) {
    if (!gate) continue
    await gate.answer(point === 'push-landed' || point === 'after-push')
    await gate.answered()
  }
  const landed = goals.find((goal) => goal.point === 'push-landed')!
  const held = execFileSync('git', ['--git-dir', landed.bare, 'log', '-1', '--format=%s', `goalkeeper/${(await listQueue(fleet)).find((item) => item.id === landed.id).sessionId}`], { encoding: 'utf8' })
  expect(held).toMatch(/ round 2 /)

  const survivor = worker(fleet, ['--name', 'survivor', '--concurrency', String(POINTS.length)])
  for (const { id } of goals) await survivor.waitFor('stderr', new RegExp(`goal ${id} done: complete`))
  survivor.child.kill('SIGTERM')
  expect(await survivor.exit).toBe(0)
  expect(survivor.stderr()).not.toMatch(/ failed/)

  const listed = new Map((await listQueue(fleet)).map((item) => [item.id, item]))
  const sessions = await readSessions(fleet, goals.map(({ id }) => listed.get(id).sessionId))
  for (const goal of goals) {
    const sessionId = listed.get(goal.id).sessionId
    const branch = `goalkeeper/${sessionId}`
    const { records, integrity } = sessions.get(sessionId)!
    expect(integrity.state).toBe('signed')
    expect(listed.get(goal.id)).toMatchObject({ state: 'done', phase: 'complete', worker: 'survivor' })
    // The invariant: the branch holds exactly what the session's done turns wrote; and the goal's work is all there.
    const files = branchFiles(goal.bare, branch)
    expect([goal.point, files]).toEqual([goal.point, filesTheSessionCallsDone(records, goal.name)])
    expect([goal.point, files]).toEqual([goal.point, { 'README.md': `# ${goal.name}\n`, 'result.txt': `${goal.goal} result\n`, 'notes.txt': `${goal.goal} notes\n`, 'done.txt': `${goal.goal} done\n` }])

    // Each claim names the commit it started from; the takeover's is the last one the dead worker recorded.
    const claims = records.filter((record) => record.type === 'fleet/claim')
    expect(claims.map((claim) => claim.data.worker)).toEqual(['doomed', 'survivor'])
    const takeover = records.indexOf(claims[1]!)
    const recorded = records.slice(0, takeover).filter((record) => record.type === 'fleet/push').map((record) => [record.data.round, record.data.commit])
    expect(claims[1]!.data.commit).toBe((recorded.at(-1) ?? [0, claims[0]!.data.commit])[1])
    const rewinds = records.filter((record) => record.type === 'fleet/rewind')
    expect(rewinds).toHaveLength(1)
    expect(records.indexOf(rewinds[0]!)).toBe(takeover + 1)
    const rewind = rewinds[0]!.data
    const late = goal.point === 'after-record' || goal.point === 'complete-push'
    expect(rewind).toMatchObject({ worker: 'survivor', commit: claims[1]!.data.commit, lostRounds: [late ? 3 : 2] })
    expect(recorded.map(([round]) => round)).toEqual(late ? [1, 2] : [1])
    // A goal completed in the undone round is pursued anew; any other is re-armed where it was.
    const creates = records.filter((record) => record.type === 'goal/change' && record.data.op === 'create')
    if (goal.point === 'complete-push') {
      expect(claims[1]!.data).toMatchObject({ takeover: true, rearmed: false, phase: 'complete' })
      expect(creates.map((record) => records.indexOf(record) > takeover)).toEqual([false, true])
      expect(survivor.stderr()).toMatch(new RegExp(`goal ${goal.id}: the goal was completed in the undone work: pursuing it again`))
    } else {
      expect(claims[1]!.data).toMatchObject({ takeover: true, rearmed: true, phase: 'active' })
      expect(creates).toHaveLength(1)
    }
    // A push that landed without its record was dropped from the branch, and the branch moved back.
    if (goal.point === 'after-push' || goal.point === 'push-landed') expect(rewind.dropped).toMatch(/^[0-9a-f]{40}$/)
    else expect(rewind.dropped).toBeUndefined()
    // The model was told, before its next round, which work was lost.
    const notice = records.find((record) => record.type === 'input/queued' && JSON.stringify(record.data.message.content).includes('workspace_rewound'))
    expect(notice?.data.message.source).toEqual({ kind: 'plugin', name: 'fleet' })
    expect(records.indexOf(notice!)).toBeGreaterThan(takeover)
  }
}, CLI_TIMEOUT)
