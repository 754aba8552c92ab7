import fs from 'node:fs'
import path from 'node:path'
import { clip } from '@goalkeeper/kit'
import type { InstructionsFile } from './discover.ts'

export const HEADING = 'Project instructions from AGENTS.md files, the most general first and the nearest last (where they disagree, the nearer one wins; a person\'s request in this session wins over all of them):'

interface Cached { mtimeMs: number; size: number; text: string }

/** File texts cached by modification time and size: the section is built before every model call. */
export class FileCache {
  private texts = new Map<string, Cached>()

  read(file: string): string | undefined {
    const stat = fs.statSync(file, { throwIfNoEntry: false })
    if (!stat?.isFile()) return undefined
    const cached = this.texts.get(file)
    if (cached && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) return cached.text
    let text: string
    try {
      text = fs.readFileSync(file, 'utf8')
    } catch {
      return undefined
    }
    this.texts.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, text })
    return text
  }
}

/**
 * The system prompt section. The nearest files are given room first: when the texts pass `maxChars`, the
 * farthest are cut (the file where the cap falls keeps its start) and a note says what was left out.
 */
export function renderSection(files: readonly InstructionsFile[], cache: FileCache, cwd: string, maxChars: number): string | undefined {
  const texts = files.map((file) => ({ file, text: (cache.read(file.path) ?? '').trim() })).filter((entry) => entry.text)
  if (!texts.length) return undefined
  let room = maxChars
  const shown = new Map<string, string>()
  const cut: string[] = []
  for (const { file, text } of [...texts].reverse()) {
    if (room <= 0) { cut.push(`${label(file, cwd)} (left out, ${text.length} characters)`); continue }
    if (text.length > room) {
      cut.push(`${label(file, cwd)} (cut after ${room} of ${text.length} characters)`)
      shown.set(file.path, clip(text, room, ''))
    } else {
      shown.set(file.path, text)
    }
    room -= text.length
  }
  const parts = texts.filter(({ file }) => shown.has(file.path)).map(({ file }) => `## ${label(file, cwd)}\n\n${shown.get(file.path)}`)
  if (cut.length) parts.push(`[Project instructions were cut to ${maxChars} characters: ${cut.reverse().join('; ')}. Read the files for the rest.]`)
  return [HEADING, ...parts].join('\n\n')
}

/** Where a file is, as the model should read it: relative to the workspace when it is inside it or above it. */
export function label(file: InstructionsFile, cwd: string): string {
  if (file.scope === 'user') return `${file.path} (user)`
  const relative = path.relative(cwd, file.path)
  return file.scope === 'workspace' ? `${relative} (workspace root)` : `${relative} (repository)`
}
