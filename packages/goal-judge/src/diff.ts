import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { MAX_DIFF_SUMMARY } from '@goalkeeper/goal'
import { clip } from '@goalkeeper/kit'

/** The workspace's change since a base: a `--stat` summary, the patch (new untracked files included) and its hash. */
export interface WorkspaceDiff {
  summary: string
  patch: string
  sha256: string
}

const GIT_TIMEOUT_MS = 30_000
const MAX_GIT_OUTPUT = 16 * 1024 * 1024
const MAX_UNTRACKED_FILES = 20
const MAX_UNTRACKED_CHARS = 4000

function git(cwd: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    // No pager, no colour, no user config that could run commands: the output is evidence, read as text.
    execFile('git', ['-c', 'core.pager=cat', '-c', 'color.ui=never', '-c', 'core.fsmonitor=false', ...args], { cwd, timeout: GIT_TIMEOUT_MS, maxBuffer: MAX_GIT_OUTPUT, env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } }, (error, stdout) => resolve(error ? undefined : stdout))
  })
}

/**
 * The work tree's state as a commit object, without touching the work tree, the index or the stash list
 * (`git stash create`): the base the diff is taken against. HEAD when nothing is changed; undefined outside git.
 */
export async function snapshotBase(cwd: string): Promise<string | undefined> {
  const stash = (await git(cwd, ['stash', 'create']))?.trim()
  if (stash) return stash
  return (await git(cwd, ['rev-parse', '--verify', 'HEAD']))?.trim() || undefined
}

/** What changed in `cwd` since `base` (HEAD when the base is unknown); undefined outside a git work tree. */
export async function workspaceDiff(cwd: string, base: string | undefined): Promise<WorkspaceDiff | undefined> {
  const from = base ?? (await git(cwd, ['rev-parse', '--verify', 'HEAD']))?.trim()
  if (!from) return undefined
  const [stat, patch, untracked] = await Promise.all([
    git(cwd, ['diff', '--stat', from]),
    git(cwd, ['diff', from]),
    git(cwd, ['ls-files', '--others', '--exclude-standard', '-z']),
  ])
  if (stat === undefined || patch === undefined || untracked === undefined) return undefined
  const fresh = untracked.split('\0').filter(Boolean)
  const added = await Promise.all(fresh.slice(0, MAX_UNTRACKED_FILES).map(async (file) => {
    const text = await fs.readFile(path.join(cwd, file), 'utf8').catch(() => '(unreadable)')
    return `new file (untracked): ${file}\n${clip(text, MAX_UNTRACKED_CHARS)}`
  }))
  const more = fresh.length > MAX_UNTRACKED_FILES ? [`... and ${fresh.length - MAX_UNTRACKED_FILES} more untracked files`] : []
  const summary = [stat.trim(), fresh.length ? `untracked: ${fresh.join(', ')}` : ''].filter(Boolean).join('\n') || 'no change'
  const full = [patch, ...added, ...more].filter(Boolean).join('\n')
  return { summary: clip(summary, MAX_DIFF_SUMMARY), patch: full, sha256: createHash('sha256').update(full).digest('hex') }
}
