import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { chmod, mkdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises'
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

/** In a clone's home: the clones of its runs, one directory each (`runs/<run id>`). */
const RUNS = 'runs'

/**
 * A private clone of a job's repository: the goal's workspace root.
 *
 * Every run of a goal on a machine has its own clone (`<root>/<session>/runs/<run>`); `dir`, the path the
 * session records and the tools work in, is a link to the clone of the run that took the goal last. So a run
 * that lost its job while still alive never commits, resets or pushes in the clone of the run that took the
 * goal over, and every push is fenced: it goes only while `dir` still links to this run's clone, and its lease
 * is the commit this run last saw on the branch (cloned, fetched or pushed), so a push that landed since,
 * whoever made it, refuses it.
 */
export class GitWorkspace {
  /** The commit this run last saw on the goal branch (cloned, fetched or pushed): the lease of its next push. */
  pushed: string | undefined
  private chain: Promise<unknown> = Promise.resolve()

  private constructor(
    /** The workspace root: a link to the clone of the run that took the goal last. */
    readonly dir: string,
    readonly branch: string,
    readonly remote: string,
    private home: string,
    private config: GitConfig,
    private masker: Masker,
    /** Whether the branch already existed on the push target (the goal ran before). */
    readonly resumed: boolean,
    /** This run's own clone, where its git commands run; its path relative to `home` is what `dir` links to. */
    readonly clone: string,
  ) {}

  /**
   * Clones the goal branch from the push target when it exists there (continuing from its last pushed
   * round), otherwise the job's ref from its repository, into a fresh directory under `config.root`.
   */
  static async prepare(job: GoalJob, jobId: string, config: GitConfig): Promise<GitWorkspace> {
    const root = config.root || path.join(os.tmpdir(), 'goalkeeper-workspaces')
    await mkdir(root, { recursive: true, mode: 0o700 })
    // The same path on every worker: the session header records the workspace root, and a worker that
    // takes the goal over works where the session says. What earlier runs left there is stale (the queue
    // gave the job to this run): their clones go, so one still alive finds its git commands failing.
    const home = path.join(root, job.sessionId)
    await rm(home, { recursive: true, force: true })
    await mkdir(path.join(home, RUNS), { recursive: true, mode: 0o700 })
    await chmod(home, 0o700)
    const run = path.join(RUNS, randomUUID())
    const masker = createMasker({ values: [config.password, config.username].filter((value) => value.length > 0) })
    const branch = branchName(config.branch, job, jobId)
    const remote = config.remote || job.repo
    const dir = path.join(home, 'workspace')
    const clone = path.join(home, run)
    const probe = new GitWorkspace(dir, branch, remote, home, config, masker, false, clone)
    try {
      await writeFile(path.join(home, 'askpass.sh'), ASKPASS, { mode: 0o700 })
      const existing = await probe.git(home, ['ls-remote', '--heads', '--', remote, `refs/heads/${branch}`])
      const resumed = existing.trim().length > 0
      if (resumed) {
        await probe.git(home, ['clone', '--quiet', '--no-tags', '--branch', branch, '--', remote, clone])
      } else {
        await probe.git(home, ['clone', '--quiet', '--no-tags', '--', job.repo, clone])
        // A branch of the remote, else a tag or commit as given.
        const remoteBranch = await probe.git(clone, ['rev-parse', '--verify', '--quiet', `refs/remotes/origin/${job.ref}^{commit}`]).catch(() => '')
        const start = remoteBranch.trim() || (await probe.git(clone, ['rev-parse', '--verify', '--quiet', `${job.ref}^{commit}`]).catch(() => {
          throw new FleetError('GIT_FAILED', `git: ${job.repo} has no branch, tag or commit ${job.ref}`)
        })).trim()
        await probe.git(clone, ['checkout', '--quiet', '-B', branch, start])
      }
      await probe.git(clone, ['remote', 'set-url', '--push', 'origin', remote])
      const workspace = new GitWorkspace(dir, branch, remote, home, config, masker, resumed, clone)
      if (resumed) workspace.pushed = (await workspace.git(clone, ['rev-parse', 'HEAD'])).trim()
      // The link is made last, in one step (a rename over whatever is there): `dir` is a whole clone or none.
      await symlink(run, `${dir}.${path.basename(run)}`)
      await rename(`${dir}.${path.basename(run)}`, dir)
      return workspace
    } catch (error) {
      await rm(home, { recursive: true, force: true })
      throw error
    }
  }

  /**
   * Commits every change in the workspace (if any) with `message`, then pushes the branch if it moved
   * since the last push. Calls run one after another. Resolves to the pushed commit. Refused
   * (`WORKSPACE_TAKEN`) once another run on this machine took the goal over; a push refused by its lease
   * (another run pushed since this one last saw the branch) fails with git's reason.
   */
  save(message: string): Promise<string | undefined> {
    const run = this.chain.then(async () => {
      await this.fence()
      await this.git(this.clone, ['add', '--all'])
      const status = await this.git(this.clone, ['status', '--porcelain'])
      if (status.trim()) await this.git(this.clone, ['commit', '--quiet', '--no-verify', '-m', message])
      const head = (await this.git(this.clone, ['rev-parse', 'HEAD'])).trim()
      if (head !== this.pushed) {
        await this.push()
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
    return (await this.git(this.clone, ['rev-parse', 'HEAD'])).trim()
  }

  /**
   * Resets the workspace and the goal branch to `commit` (a commit the branch holds), dropping whatever
   * came after it. Resolves to the branch head it replaced, or undefined when the branch was there already.
   */
  rewind(commit: string): Promise<string | undefined> {
    const run = this.chain.then(async () => {
      await this.fence()
      // The branch as it is now: a push that landed since the clone (a run that lost the goal) is seen and replaced.
      const ref = `refs/heads/${this.branch}`
      const current = (await this.git(this.clone, ['ls-remote', '--heads', '--', this.remote, ref])).trim().split(/\s+/)[0] || undefined
      if (current && current !== this.pushed) await this.git(this.clone, ['fetch', '--quiet', '--no-tags', '--', this.remote, ref])
      this.pushed = current
      await this.git(this.clone, ['cat-file', '-e', `${commit}^{commit}`]).catch(() => {
        // The branch was rewritten outside the fleet: no retry brings the session's workspace back.
        throw Object.assign(new FleetError('GIT_FAILED', `git: the goal branch ${this.branch} does not hold commit ${commit}, the last one its session recorded`), { permanent: true })
      })
      await this.git(this.clone, ['reset', '--quiet', '--hard', commit])
      await this.git(this.clone, ['clean', '--quiet', '-d', '--force'])
      const replaced = this.pushed
      if (replaced === commit || replaced === undefined) return undefined
      await this.push()
      this.pushed = commit
      return replaced
    })
    this.chain = run.catch(() => {})
    return run
  }

  /**
   * Pushes HEAD to the goal branch, fenced: only while this run still owns the workspace, and only over the
   * commit it last saw there (none: the branch must not exist), never over a push it has not seen.
   */
  private async push(): Promise<void> {
    await this.fence()
    const lease = `--force-with-lease=refs/heads/${this.branch}:${this.pushed ?? ''}`
    await this.git(this.clone, ['push', '--quiet', lease, 'origin', `HEAD:refs/heads/${this.branch}`]).catch((error) => {
      if (!/stale info/.test(error.message)) throw error
      const seen = this.pushed ? `at ${this.pushed.slice(0, 12)}` : 'absent'
      const why = `the goal branch ${this.branch} moved since this run saw it ${seen} (another run pushed to it)`
      throw new FleetError('GIT_FAILED', `git push failed: ${why}; nothing was overwritten`)
    })
  }

  /** Whether the workspace root still links to this run's clone (no other run on this machine took the goal since). */
  async owned(): Promise<boolean> {
    const target = await readlink(this.dir).catch(() => undefined)
    return target === path.relative(this.home, this.clone)
  }

  private async fence(): Promise<void> {
    if (await this.owned()) return
    const taken = `another run on this machine took the goal over (${this.dir} is its clone now)`
    throw new FleetError('WORKSPACE_TAKEN', `${taken}: this run's changes are not pushed`)
  }

  /**
   * Removes the clone, and the goal's home with it unless another run on this machine has taken the goal
   * over since (the path is the same on every worker): a run whose job was released while it still ran must
   * not remove the new clone.
   */
  async dispose(): Promise<void> {
    await this.chain
    if (await this.owned()) await rm(this.home, { recursive: true, force: true })
    else await rm(this.clone, { recursive: true, force: true })
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
        // A refused ref update (`! [rejected] ... (stale info)`) says why better than the `error:` line after it.
        const refused = lines.find((line) => /^\s*! \[/.test(line))?.trim().replace(/\s+/g, ' ')
        const verdict = refused ?? lines.find((line) => /^(fatal|error):/.test(line)) ?? lines.at(-1) ?? error.message
        const reason = timedOut ? `timed out after ${config.timeoutMs} ms` : verdict.replace(/^(fatal|error):\s*/, '')
        reject(new FleetError('GIT_FAILED', this.masker.mask(`git ${args[0]} failed: ${reason}`)))
      })
    })
  }
}
