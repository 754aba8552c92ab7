// Every worker clones a goal into the same path (the session header records it). A worker whose job was
// released while it still ran, and which ends after a worker on the same machine took the goal over,
// must leave the new clone alone.
import { execFileSync } from 'node:child_process'
import { access, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { Config, type GoalJob, GitWorkspace } from '@goalkeeper/fleet'

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, stdio: 'ignore', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t', GIT_CONFIG_GLOBAL: '/dev/null' } })

it('a worker that lost the goal leaves the clone of the worker that took it over; the owner removes its own', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gk-owner-'))
  dirs.push(dir)
  const bare = path.join(dir, 'repo.git')
  git(dir, 'init', '--quiet', '--bare', '-b', 'main', bare)
  git(dir, 'clone', '--quiet', bare, path.join(dir, 'seed'))
  git(path.join(dir, 'seed'), 'commit', '--quiet', '--allow-empty', '-m', 'start')
  git(path.join(dir, 'seed'), 'push', '--quiet', 'origin', 'HEAD:main')
  const job: GoalJob = { version: 1, sessionId: '20260101-000000-owner1', objective: 'o', repo: `file://${bare}`, ref: 'main', submittedAt: new Date(0).toISOString() }
  const config = Config({ git: { root: path.join(dir, 'workspaces') } }).git

  const lost = await GitWorkspace.prepare(job, 'job-1', config)
  const taker = await GitWorkspace.prepare(job, 'job-1', config)
  expect(taker.dir).toBe(lost.dir)
  await lost.dispose()
  await access(path.join(taker.dir, '.git'))
  await taker.dispose()
  await expect(access(path.dirname(taker.dir))).rejects.toThrow()
})
