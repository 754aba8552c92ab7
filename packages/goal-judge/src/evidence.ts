import fs from 'node:fs/promises'
import path from 'node:path'
import type { CheckEvidence, Goal } from '@goalkeeper/goal'
import { clip, tail } from '@goalkeeper/kit'
import type { Session } from '@goalkeeper/session'
import type { WorkspaceDiff } from './diff.ts'

/** What a judge decides on. Never the transcript: the model's words reach it only as its completion message. */
export interface Evidence {
  objective: string
  checks: CheckEvidence[]
  /** undefined outside a git work tree. */
  diff: WorkspaceDiff | undefined
  /** The model's text in the turn that claimed completion. */
  completion: string
  /** Workspace files the completion message names, with their beginnings. */
  files: { path: string; text: string }[]
}

const MAX_COMPLETION = 4000
const MAX_FILES = 5
const MAX_FILE_CHARS = 3000
const MAX_FILE_BYTES = 1024 * 1024

/** The model's texts of `turn` up to the step that asked for completion, last part kept. */
export function completionMessage(session: Session, turn: number): string {
  const texts: string[] = []
  for (const record of session.records) {
    if (record.type !== 'assistant/message') continue
    const data = record.data as { turn: number; text: string; partial?: true }
    if (data.turn === turn && !data.partial && data.text.trim()) texts.push(data.text.trim())
  }
  return tail(texts.join('\n\n'), MAX_COMPLETION)
}

/**
 * Files the completion message names (`src/a.ts`, `README.md`) that exist inside the workspace. A name that
 * resolves outside it, through `..` or a symbolic link, is left out: the judge sees what the model could see.
 */
export async function namedFiles(cwd: string, message: string): Promise<{ path: string; text: string }[]> {
  const names = new Set(message.match(/[\w.@-]+(?:\/[\w.@-]+)*\.[A-Za-z0-9]+/g) ?? [])
  const root = await fs.realpath(cwd).catch(() => undefined)
  if (!root) return []
  const files: { path: string; text: string }[] = []
  for (const name of names) {
    if (files.length >= MAX_FILES) break
    const real = await fs.realpath(path.resolve(root, name)).catch(() => undefined)
    if (!real || !real.startsWith(root + path.sep)) continue
    const stat = await fs.stat(real).catch(() => undefined)
    if (!stat?.isFile() || stat.size > MAX_FILE_BYTES) continue
    const text = await fs.readFile(real, 'utf8').catch(() => undefined)
    if (text !== undefined) files.push({ path: path.relative(root, real), text: clip(text, MAX_FILE_CHARS) })
  }
  return files
}

/**
 * The evidence as the judge reads it, within `maxChars`: the patch is what grows, so it is what is cut (its
 * `--stat` summary and hash stay whole). Texts from the workspace and the model are fenced as data.
 */
export function renderEvidence(goal: Pick<Goal, 'objective'> & Pick<Partial<Goal>, 'until'>, evidence: Evidence, maxChars: number): string {
  const fence = (text: string) => `<<<\n${text}\n>>>`
  const checks = evidence.checks.length
    ? evidence.checks.map((c) => `- \`${c.command}\`: ${c.ok ? 'passed' : 'failed'} (exit code ${c.exitCode ?? 'none'})\n${fence(c.output)}`).join('\n')
    : 'The goal has no check commands.'
  const files = evidence.files.length
    ? evidence.files.map((f) => `- ${f.path}\n${fence(f.text)}`).join('\n')
    : 'The completion message names no file of the workspace.'
  const head = [
    `Objective: ${JSON.stringify(goal.objective)}`,
    ...(goal.until ? [`Condition that completes the goal: ${JSON.stringify(goal.until)}`] : []),
    '',
    '## Checks (all passed before you were asked)',
    checks,
    '',
    '## Completion message of the agent',
    fence(evidence.completion || '(the agent wrote no text)'),
    '',
    '## Files the message names',
    files,
    '',
    '## Workspace change since the goal began',
  ].join('\n')
  if (!evidence.diff) return `${head}\nThe workspace is not a git work tree: no diff is available.`
  const { summary, patch, sha256 } = evidence.diff
  const room = Math.max(0, maxChars - head.length - summary.length - 200)
  const shown = patch.length <= room ? patch : `${clip(patch, room)}\n(patch cut: ${room} of ${patch.length} characters shown; the summary above is complete)`
  return `${head}\nSummary (sha256 ${sha256}):\n${fence(summary)}\nPatch:\n${fence(shown || '(empty)')}`
}
