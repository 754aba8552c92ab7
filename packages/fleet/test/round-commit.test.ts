// The round-commit plugin in a real composition (session, agent loop, goal, round driver, workspace tools
// rooted in a real clone of a bare repository): each round's changes are committed and pushed when the
// agent goes idle, recorded as fleet/push, and the next round waits at admission until that push is done.
import { execFileSync } from 'node:child_process'
import { constants, openSync, writeSync, closeSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { Agent, PromptDecision, Submission } from '@goalkeeper/agent-loop'
import { Config, type GoalJob, GitWorkspace, roundCommit } from '@goalkeeper/fleet'
import type { SessionRecord, UserMessage } from '@goalkeeper/session'
import { call, createHarness, done, tools, untilGoalStops, type Harness } from '@goalkeeper/test-kit'

const IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t', GIT_CONFIG_GLOBAL: '/dev/null' }
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, ...IDENTITY } })

interface Setup {
  h: Harness
  agent: Agent
  workspace: GitWorkspace
  bare: string
  progress: { rounds?: number; phase?: string }[]
  failures: unknown[]
  /** Fires whenever the plugin tells progress or a failure. */
  told: EventTarget
}

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A bare repository with one commit on main, its clone as the goal's workspace, and the composition around it. */
async function setup(): Promise<Setup> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gk-round-commit-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  const bare = path.join(dir, 'repo.git')
  const seed = path.join(dir, 'seed')
  git(dir, 'init', '--quiet', '--bare', '-b', 'main', bare)
  git(dir, 'clone', '--quiet', bare, seed)
  await writeFile(path.join(seed, 'README.md'), '# repo\n')
  git(seed, 'add', '.')
  git(seed, 'commit', '--quiet', '-m', 'init')
  git(seed, 'push', '--quiet', 'origin', 'HEAD:main')
  const job: GoalJob = { version: 1, sessionId: '20260101-000000-abcdef', objective: 'Write the files', repo: `file://${bare}`, ref: 'main', submittedAt: new Date(0).toISOString() }
  const workspace = await GitWorkspace.prepare(job, 'job-1', Config({ git: { root: path.join(dir, 'workspaces') } }).git)
  cleanups.push(() => workspace.dispose())

  const h = await createHarness({ workspaceTools: false })
  cleanups.push(() => h.dispose())
  await h.load(await import('@goalkeeper/workspace-tools'), { root: workspace.dir })
  await h.load(await import('@goalkeeper/goal'), {})
  await h.load(await import('@goalkeeper/goal-session'), {})
  const agent = await h.createAgent({ cwd: workspace.dir })
  return { h, agent, workspace, bare, progress: [], failures: [], told: new EventTarget() }
}

async function plugCommits(s: Setup): Promise<void> {
  await s.h.load(roundCommit, {
    agent: s.agent,
    workspace: s.workspace,
    worker: 'w-test',
    progress: (progress: Setup['progress'][number]) => {
      s.progress.push(progress)
      s.told.dispatchEvent(new Event('told'))
    },
    failed: (error: unknown) => {
      s.failures.push(error)
      s.told.dispatchEvent(new Event('told'))
    },
  })
}

/** Resolves once what the plugin told satisfies `predicate` (checked on every progress or failure). */
function untilTold(s: Setup, predicate: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (!predicate()) return
      s.told.removeEventListener('told', check)
      resolve()
    }
    s.told.addEventListener('told', check)
    check()
  })
}

/** Resolves once the session holds `count` records of `type` (checked on every append). */
function untilRecords(s: Setup, type: string, count: number): Promise<SessionRecord[]> {
  return new Promise((resolve) => {
    const check = () => {
      const found = s.h.records(s.agent).filter((record) => record.type === type)
      if (found.length < count) return
      stop()
      resolve(found)
    }
    const stop = s.h.root.on('session/event', check)
    check()
  })
}

const roundOf = (message: UserMessage) => (message.source.kind === 'goal' ? message.source.round : 0)
const seqOf = (records: SessionRecord[], type: string, test: (data: any) => boolean) => records.find((record) => record.type === type && test(record.data))!.seq

/** Two rounds, each writing one file. */
function scriptTwoRounds(s: Setup) {
  s.h.scripted.push(tools(call('write_file', { path: 'one.txt', content: 'round one\n' })), done('one written'))
  s.h.scripted.push(tools(call('write_file', { path: 'two.txt', content: 'round two\n' })), done('two written'))
}

/**
 * A pre-receive hook that holds the first push until the test opens the gate (a named pipe): the push
 * is under way, and stays so, for as long as the test needs to see what waits for it.
 */
async function gateFirstPush(bare: string): Promise<{ open(): Promise<void> }> {
  const gate = path.join(bare, 'gate')
  execFileSync('mkfifo', [gate])
  await mkdir(path.join(bare, 'hooks'), { recursive: true })
  await writeFile(path.join(bare, 'hooks', 'pre-receive'), `#!/bin/sh\ncat >/dev/null\nif [ -p '${gate}' ]; then read _ < '${gate}'; rm -f '${gate}'; fi\n`)
  await chmod(path.join(bare, 'hooks', 'pre-receive'), 0o755)
  // A test that fails before opening it must not leave the hook (and git) waiting.
  cleanups.push(async () => {
    try {
      const fd = openSync(gate, constants.O_WRONLY | constants.O_NONBLOCK)
      writeSync(fd, 'go\n')
      closeSync(fd)
    } catch {}
  })
  return { open: () => writeFile(gate, 'go\n') }
}

describe('round-commit', () => {
  it('commits and pushes each round when the agent goes idle, records fleet/push, and holds the next round until the push is done', async () => {
    const s = await setup()
    const gate = await gateFirstPush(s.bare)
    await plugCommits(s)
    // First in the admission chain (prepended): it sees the round 2 batch arrive, before anything holds it.
    const atAdmission = new Promise<void>((resolve) => {
      s.h.root.on('agent/prompt-submit', async (agent: Agent, submission: Submission, next: () => Promise<PromptDecision>) => {
        if (agent === s.agent && submission.messages.some((message) => roundOf(message) === 2)) resolve()
        return next()
      }, true)
    })
    scriptTwoRounds(s)
    s.h.root.goals.create(s.agent, { objective: 'Write one.txt, then two.txt', maxGoalRounds: 2 })

    await atAdmission
    // Round 2 waits while round 1's push is held at the remote.
    expect(s.h.records(s.agent).filter((record) => record.type === 'turn/start').map((record) => record.data)).toEqual([{ turn: 1 }])
    await gate.open()
    const pushes = await untilRecords(s, 'fleet/push', 2)
    await untilGoalStops(s.h.root, s.agent)

    const branch = s.workspace.branch
    const heads = git(s.bare, 'log', '--format=%H %s', branch).trim().split('\n')
    expect(heads.map((line) => line.slice(41))).toEqual([`goalkeeper: round 2 of session ${s.agent.id}`, `goalkeeper: round 1 of session ${s.agent.id}`, 'init'])
    expect(pushes.map((record) => record.data)).toEqual([
      { worker: 'w-test', branch, commit: heads[1]!.slice(0, 40), round: 1 },
      { worker: 'w-test', branch, commit: heads[0]!.slice(0, 40), round: 2 },
    ])
    expect(git(s.bare, 'show', `${heads[1]!.slice(0, 40)}:one.txt`)).toBe('round one\n')
    expect(git(s.bare, 'show', `${branch}:two.txt`)).toBe('round two\n')

    // Round 1 ended, round 2 was queued, round 1's push landed, and only then did round 2 start.
    const records = s.h.records(s.agent)
    const order = [
      seqOf(records, 'turn/end', (data) => data.turn === 1),
      seqOf(records, 'input/queued', (data) => roundOf(data.message) === 2),
      pushes[0]!.seq,
      seqOf(records, 'turn/start', (data) => data.turn === 2),
      pushes[1]!.seq,
    ]
    expect(order).toEqual([...order].sort((a, b) => a - b))
    // Progress is told once each commit is flushed, round by round.
    await untilTold(s, () => s.progress.some((item) => item.rounds === 2))
    expect(s.progress[0]).toEqual({ rounds: 1, phase: 'active' })
    expect(s.failures).toEqual([])
  })

  it('a push that fails is reported and recorded nowhere; the rounds go on and the changes stay committed in the clone', async () => {
    const s = await setup()
    await plugCommits(s)
    // The push target is gone: every push fails, with git's own reason.
    await rm(s.bare, { recursive: true, force: true })
    scriptTwoRounds(s)
    s.h.root.goals.create(s.agent, { objective: 'Write one.txt, then two.txt', maxGoalRounds: 2 })
    await untilGoalStops(s.h.root, s.agent)
    await untilTold(s, () => s.failures.length >= 2)

    expect(s.failures[0]).toMatchObject({ name: 'FleetError', code: 'GIT_FAILED', message: expect.stringMatching(/^git push failed: /) })
    const records = s.h.records(s.agent)
    expect(records.filter((record) => record.type === 'fleet/push')).toEqual([])
    expect(records.filter((record) => record.type === 'turn/start').map((record) => record.data)).toEqual([{ turn: 1 }, { turn: 2 }])
    expect(git(s.workspace.dir, 'log', '--format=%s').trim().split('\n')).toEqual([`goalkeeper: round 2 of session ${s.agent.id}`, `goalkeeper: round 1 of session ${s.agent.id}`, 'init'])
  })

  it('once unloaded, commits nothing and holds no round', async () => {
    const s = await setup()
    const plugged = await s.h.load(roundCommit, { agent: s.agent, workspace: s.workspace, worker: 'w-test' })
    await plugged.dispose()
    scriptTwoRounds(s)
    s.h.root.goals.create(s.agent, { objective: 'Write one.txt, then two.txt', maxGoalRounds: 2 })
    await untilGoalStops(s.h.root, s.agent)
    expect(s.h.records(s.agent).filter((record) => record.type === 'turn/start')).toHaveLength(2)
    expect(s.h.records(s.agent).filter((record) => record.type === 'fleet/push')).toEqual([])
    expect(git(s.workspace.dir, 'log', '--format=%s').trim().split('\n')).toEqual(['init'])
    expect(git(s.bare, 'branch', '--format=%(refname:short)').trim()).toBe('main')
  })
})
