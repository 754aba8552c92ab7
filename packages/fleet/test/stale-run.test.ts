// Two runs of one goal at once, the first of which lost its job while still alive (a loaded machine, a cut
// connection): the one that took the goal over must keep every round it pushed, whatever the stale run does
// after. On one machine both use the same workspace path (the session header records it); across machines
// each has its own clone. In process, on real clones of a bare repository.
import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { Config, type GoalJob, GitWorkspace } from '@goalkeeper/fleet'

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t', GIT_CONFIG_GLOBAL: '/dev/null' } })

async function setup(name: string) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gk-stale-'))
  dirs.push(dir)
  const bare = path.join(dir, 'repo.git')
  git(dir, 'init', '--quiet', '--bare', '-b', 'main', bare)
  git(dir, 'clone', '--quiet', bare, path.join(dir, 'seed'))
  await writeFile(path.join(dir, 'seed', 'README.md'), '# seed\n')
  git(path.join(dir, 'seed'), 'add', '.')
  git(path.join(dir, 'seed'), 'commit', '--quiet', '-m', 'start')
  git(path.join(dir, 'seed'), 'push', '--quiet', 'origin', 'HEAD:main')
  const job: GoalJob = { version: 1, sessionId: `20260101-000000-${name}`, objective: 'o', repo: `file://${bare}`, ref: 'main', submittedAt: new Date(0).toISOString() }
  const config = (root: string) => Config({ git: { root: path.join(dir, root) } }).git
  const branch = `goalkeeper/${job.sessionId}`
  const head = () => git(dir, '--git-dir', bare, 'rev-parse', branch).trim()
  const files = () => git(dir, '--git-dir', bare, 'ls-tree', '-r', '--name-only', branch).split('\n').filter(Boolean)
  return { job, config, head, files }
}

it('on one machine, a stale run can neither reset nor push over the rounds of the run that took the goal over', async () => {
  const { job, config, head, files } = await setup('stale1')
  const stale = await GitWorkspace.prepare(job, 'job-1', config('workspaces'))
  await writeFile(path.join(stale.dir, 'notes.txt'), 'round 1\n')
  const round1 = (await stale.save('round 1'))!
  expect(head()).toBe(round1)

  // The job expired while the stale run still ran; another worker on this machine took the goal over.
  const taker = await GitWorkspace.prepare(job, 'job-1', config('workspaces'))
  expect(taker.dir).toBe(stale.dir)
  expect(taker.pushed).toBe(round1)
  // The taker's round writes its result; before it is committed, the stale run (a takeover itself, late to
  // start) rewinds to the commit its session recorded and pushes that, then saves a late round.
  await writeFile(path.join(taker.dir, 'result.txt'), 'done\n')
  const refusal = (work: Promise<unknown>) => work.then(() => 'done', (error: unknown) => error)
  const refused = [await refusal(stale.rewind(round1))]
  const round2 = await taker.save('round 2')
  refused.push(await refusal(stale.save('late round')), await refusal(stale.rewind(round1)))

  // The branch holds the taker's last round, and the taker's clone is as its rounds left it.
  expect(files()).toEqual(['README.md', 'notes.txt', 'result.txt'])
  expect(head()).toBe(round2)
  expect(refused).toMatchObject([{ code: 'WORKSPACE_TAKEN' }, { code: 'WORKSPACE_TAKEN' }, { code: 'WORKSPACE_TAKEN' }])
  expect(await readFile(path.join(taker.dir, 'result.txt'), 'utf8')).toBe('done\n')
  expect(await taker.head()).toBe(round2)
  await writeFile(path.join(taker.dir, 'result.txt'), 'checked\n')
  const round3 = await taker.save('round 3')
  expect(head()).toBe(round3)

  // The stale run's clean-up leaves the taker's clone; the taker's removes everything.
  await stale.dispose()
  expect(await readFile(path.join(taker.dir, 'result.txt'), 'utf8')).toBe('checked\n')
  await taker.dispose()
  await expect(readFile(path.join(taker.dir, 'result.txt'))).rejects.toThrow()
})

it('across machines, a stale run\'s push is refused by its lease: the commit it last saw is not the branch\'s', async () => {
  const { job, config, head, files } = await setup('stale2')
  const stale = await GitWorkspace.prepare(job, 'job-1', config('machine-a'))
  await writeFile(path.join(stale.dir, 'notes.txt'), 'round 1\n')
  const round1 = (await stale.save('round 1'))!

  const taker = await GitWorkspace.prepare(job, 'job-1', config('machine-b'))
  await writeFile(path.join(taker.dir, 'result.txt'), 'done\n')
  const round2 = await taker.save('round 2')

  // The stale run pushes a later round of its own, and rewinds to what its session recorded.
  await writeFile(path.join(stale.dir, 'notes.txt'), 'round 2 of the stale run\n')
  await expect(stale.save('late round')).rejects.toThrow(/^git push failed: the goal branch goalkeeper\/\S+ moved since this run saw it at [0-9a-f]{12} \(another run pushed to it\); nothing was overwritten$/)
  expect(head()).toBe(round2)
  await expect(stale.rewind(round1)).resolves.toBe(round2)
  // A rewind sees the branch as it is now before it replaces it: that one is a takeover's, and lands.
  expect(head()).toBe(round1)
  expect(files()).toEqual(['README.md', 'notes.txt'])
  // The taker's next push is refused in turn: it never saw that rewind.
  await writeFile(path.join(taker.dir, 'result.txt'), 'checked\n')
  await expect(taker.save('round 3')).rejects.toThrow(/git push failed/)
  expect(head()).toBe(round1)
  await stale.dispose()
  await taker.dispose()
})
