import path from 'node:path'
import { readdir } from 'node:fs/promises'
import type { Dirent } from 'node:fs'
import type { ToolDefinition } from '@goalkeeper/tools'
import { fsError } from '../errors.ts'
import { SKIPPED_DIRS, byName } from '../text.ts'
import { checkAborted, type Workspace } from '../workspace.ts'
import { openDirectory, type Dir } from '../walk.ts'
import { located, text } from './shown.ts'

interface Args { path?: string; depth?: number }

export const MAX_DEPTH = 5

export function listDirTool(ws: Workspace): ToolDefinition<Args> {
  const cap = ws.limits.maxListEntries
  return {
    name: 'list_dir',
    kind: 'read',
    title: (args) => `List ${text(args.path) ?? '.'}`,
    locations: (args) => located(args.path ?? '.'),
    description: 'List a directory of the workspace, sorted by name, one path per line relative to the listed '
      + `directory. Directories end with "/", symbolic links with "@" (not followed). depth 1 (default) lists `
      + `direct children; up to ${MAX_DEPTH} recurses. node_modules and .git are shown but not entered. `
      + `At most ${cap} entries.`,
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Directory relative to the workspace root (default: the root).' },
        depth: { type: 'integer', minimum: 1, maximum: MAX_DEPTH, description: 'How many levels to list (default 1).' },
      },
      additionalProperties: false,
    },
    async execute(args, call) {
      const target = await ws.resolve(call, args.path ?? '.')
      const { shown, isProtected } = target
      const top = await openDirectory(target, `"${shown}" is a file, not a directory; use read_file to read it.`)
      const depth = args.depth ?? 1
      const lines: string[] = []
      let capped = false

      /** Lists `dir`, held open, and descends into subdirectories through it (see walk.ts), never by path. */
      const walk = async (dir: Dir, prefix: string, level: number): Promise<void> => {
        checkAborted(call)
        // Only the requested directory must be readable; an unreadable subdirectory is marked, not fatal.
        const entries: Dirent[] | undefined = await readdir(dir.self, { withFileTypes: true })
          .catch((error) => (level === 1 ? fsError(error, shown) : undefined))
        if (!entries) return void (lines[lines.length - 1] += ' (unreadable)')
        entries.sort((a, b) => byName(a.name, b.name))
        for (const entry of entries) {
          if (lines.length >= cap) return void (capped = true)
          const relative = prefix + entry.name
          const guarded = entry.isDirectory() ? isProtected(path.join(dir.real, entry.name)) : undefined
          if (entry.isSymbolicLink()) lines.push(`${relative}@`)
          else if (!entry.isDirectory()) lines.push(relative)
          else if (SKIPPED_DIRS.has(entry.name)) lines.push(`${relative}/ (not listed)`)
          else if (guarded) lines.push(`${relative}/ (not listed: ${guarded})`)
          else {
            lines.push(`${relative}/`)
            if (level >= depth) continue
            // Gone, or swapped for a link, since it was read: marked like an unreadable one.
            const sub = await dir.enter(entry.name, shown).catch(() => undefined)
            if (!sub) {
              lines[lines.length - 1] += ' (unreadable)'
              continue
            }
            try {
              await walk(sub, `${relative}/`, level + 1)
            } finally {
              await sub.close()
            }
          }
        }
      }
      try {
        await walk(top, '', 1)
      } finally {
        await top.close()
      }
      if (!lines.length) return `(${shown} is empty)`
      if (capped) lines.push(`[Listing stopped at ${cap} entries; list a subdirectory or use a smaller depth.]`)
      return lines.join('\n')
    },
  }
}
