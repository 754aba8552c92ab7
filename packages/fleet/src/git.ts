import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createMasker, type Masker } from '@goalkeeper/kit'
import type { GitConfig } from './config.ts'
import { FleetError, type GoalJob } from './job.ts'

// GIT_ASKPASS answers git's prompts from the environment: the credentials reach git without ever being an
// argument (visible in `ps` and in error messages that quote the command line) or part of a URL.
const ASKPASS = `#!/bin/sh
case "$1" in
  Username*) printf '%s\\n' "$GOALKEEPER_GIT_USERNAME" ;;
  *) printf '%s\\n' "$GOALKEEPER_GIT_PASSWORD" ;;
esac
`

/** `branch` with {session} and {job} filled in. */
export function branchName(pattern: string, job: GoalJob, jobId: string): string {
  return pattern.replaceAll('{session}', job.sessionId).replaceAll('{job}', jobId)
}

/** In a clone's home: which `prepare` made it. */
const OWNER_FILE = 'owner'

/** A private clone of a job's repository: the goal's workspace root. */
export class GitWorkspace {
  /** The commit last pushed to the goal branch (what a worker taking over starts from). */
  pushed: string | undefined
  private chain: Promise<unknown> = Promise.resolve()

  private constructor(
    readonly dir: string,
    readonly branch: string,
    readonly remote: string,
    private home: string,
    private config: GitConfig,
    private masker: Masker,
    /** Whether the branch already existed on the push target (the goal ran before). */
    readonly resumed: boolean,
    /** Written in `home` by `prepare`: a worker that lost the goal leaves a home another worker took alone. */
    private owner?: string,
  ) {}

  /**
   * Clones the goal branch from the push target when it exists there (continuing from its last pushed
   * round), otherwise the job's ref from its repository, into a fresh directory under `config.root`.
   */
  static async prepare(job: GoalJob, jobId: string, config: GitConfig): Promise<GitWorkspace> {
    const root = config.root || path.join(os.tmpdir(), 'goalkeeper-workspaces')
    await mkdir(root, { recursive: true, mode: 0o700 })
    // The same path on every worker: the session header records the workspace root, and a worker that
    // takes the goal over works where the session says. What a dead worker left there is stale: start clean.
    const home = path.join(root, job.sessionId)
    await rm(home, { recursive: true, force: true })
    await mkdir(home, { mode: 0o700 })
    await chmod(home, 0o700)
    const owner = randomUUID()
    await writeFile(path.join(home, OWNER_FILE), owner, { mode: 0o600 })
    const masker = createMasker({ values: [config.password, config.username].filter((value) => value.length > 0) })
    const branch = branchName(config.branch, job, jobId)
    const remote = config.remote || job.repo
    const dir = path.join(home, 'workspace')
    const probe = new GitWorkspace(dir, branch, remote, home, config, masker, false)
    try {
      await writeFile(path.join(home, 'askpass.sh'), ASKPASS, { mode: 0o700 })
      const existing = await probe.git(home, ['ls-remote', '--heads', '--', remote, `refs/heads/${branch}`])
      const resumed = existing.trim().length > 0
      if (resumed) {
        await probe.git(home, ['clone', '--quiet', '--no-tags', '--branch', branch, '--', remote, dir])
      } else {
        await probe.git(home, ['clone', '--quiet', '--no-tags', '--', job.repo, dir])
        // A branch of the remote, else a tag or commit as given.
        const remoteBranch = await probe.git(dir, ['rev-parse', '--verify', '--quiet', `refs/remotes/origin/${job.ref}^{commit}`]).catch(() => '')
        const start = remoteBranch.trim() || (await probe.git(dir, ['rev-parse', '--verify', '--quiet', `${job.ref}^{commit}`]).catch(() => {
          throw new FleetError('GIT_FAILED', `git: ${job.repo} has no branch, tag or commit ${job.ref}`)
        })).trim()
        await probe.git(dir, ['checkout', '--quiet', '-B', branch, start])
      }
      await probe.git(dir, ['remote', 'set-url', '--push', 'origin', remote])
      const workspace = new GitWorkspace(dir, branch, remote, home, config, masker, resumed, owner)
      if (resumed) workspace.pushed = (await workspace.git(dir, ['rev-parse', 'HEAD'])).trim()
      return workspace
    } catch (error) {
      await rm(home, { recursive: true, force: true })
      throw error
    }
  }

  /**
   * Commits every change in the workspace (if any) with `message`, then pushes the branch if it moved
   * since the last push. Calls run one after another. Resolves to the pushed commit.
   */
  save(message: string): Promise<string | undefined> {
    const run = this.chain.then(async () => {
      await this.git(this.dir, ['add', '--all'])
      const status = await this.git(this.dir, ['status', '--porcelain'])
      if (status.trim()) await this.git(this.dir, ['commit', '--quiet', '--no-verify', '-m', message])
      const head = (await this.git(this.dir, ['rev-parse', 'HEAD'])).trim()
      if (head !== this.pushed) {
        await this.git(this.dir, ['push', '--quiet', '--force-with-lease', 'origin', `HEAD:refs/heads/${this.branch}`])
        this.pushed = head
      }
      return head
    })
    this.chain = run.catch(() => {})
    return run
  }

  /** The commit the workspace is at. */
  async head(): Promise<string> {
    await this.chain
    return (await this.git(this.dir, ['rev-parse', 'HEAD'])).trim()
  }

  /**
   * Resets the workspace and the goal branch to `commit` (a commit the branch holds), dropping whatever
   * came after it. Resolves to the branch head it replaced, or undefined when the branch was there already.
   */
  rewind(commit: string): Promise<string | undefined> {
    const run = this.chain.then(async () => {
      await this.git(this.dir, ['cat-file', '-e', `${commit}^{commit}`]).catch(() => {
        // The branch was rewritten outside the fleet: no retry brings the session's workspace back.
        throw Object.assign(new FleetError('GIT_FAILED', `git: the goal branch ${this.branch} does not hold commit ${commit}, the last one its session recorded`), { permanent: true })
      })
      await this.git(this.dir, ['reset', '--quiet', '--hard', commit])
      await this.git(this.dir, ['clean', '--quiet', '-d', '--force'])
      const replaced = this.pushed
      if (replaced === commit || replaced === undefined) return undefined
      // The lease is the head this clone saw: a push that landed since (a dead worker's straggler) refuses this one.
      await this.git(this.dir, ['push', '--quiet', '--force-with-lease', 'origin', `HEAD:refs/heads/${this.branch}`])
      this.pushed = commit
      return replaced
    })
    this.chain = run.catch(() => {})
    return run
  }

  /**
   * Removes the clone, unless another worker on this machine has taken the goal over since (the path is the
   * same on every worker): a worker whose job was released while it still ran must not remove the new clone.
   */
  async dispose(): Promise<void> {
    await this.chain
    const current = await readFile(path.join(this.home, OWNER_FILE), 'utf8').catch(() => undefined)
    if (current !== undefined && current !== this.owner) return
    await rm(this.home, { recursive: true, force: true })
  }

  private git(cwd: string, args: string[]): Promise<string> {
    const { config } = this
    const identity = { GIT_AUTHOR_NAME: config.authorName, GIT_AUTHOR_EMAIL: config.authorEmail, GIT_COMMITTER_NAME: config.authorName, GIT_COMMITTER_EMAIL: config.authorEmail }
    const env = {
      ...process.env,
      ...identity,
      GIT_TERMINAL_PROMPT: '0',
      GIT_ASKPASS: path.join(this.home, 'askpass.sh'),
      GOALKEEPER_GIT_USERNAME: config.username,
      GOALKEEPER_GIT_PASSWORD: config.password,
      // No user or system configuration (hooks, credential helpers, rewrites) changes what a worker does.
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
    }
    return new Promise((resolve, reject) => {
      execFile('git', args, { cwd, env, timeout: config.timeoutMs, maxBuffer: 16 << 20, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
        if (!error) return resolve(stdout)
        const timedOut = (error as { killed?: boolean }).killed
        const lines = stderr.trim().split('\n').filter(Boolean)
        // git's own verdict (`fatal: ...`) rather than the advice lines it prints after it.
        const verdict = lines.find((line) => /^(fatal|error):/.test(line)) ?? lines.at(-1) ?? error.message
        const reason = timedOut ? `timed out after ${config.timeoutMs} ms` : verdict.replace(/^(fatal|error):\s*/, '')
        reject(new FleetError('GIT_FAILED', this.masker.mask(`git ${args[0]} failed: ${reason}`)))
      })
    })
  }
}
