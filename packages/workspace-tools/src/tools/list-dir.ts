import path from 'node:path'
import { readdir, stat } from 'node:fs/promises'
import type { Dirent } from 'node:fs'
import type { ToolDefinition } from '@goalkeeper/tools'
import { WorkspaceError, fsError } from '../errors.ts'
import { SKIPPED_DIRS, byName } from '../text.ts'
import { checkAborted, type Workspace } from '../workspace.ts'

interface Args { path?: string; depth?: number }

export const MAX_DEPTH = 5

export function listDirTool(ws: Workspace): ToolDefinition<Args> {
  const cap = ws.limits.maxListEntries
  return {
    name: 'list_dir',
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
      const { real, shown, isProtected } = await ws.resolve(call, args.path ?? '.')
      const info = await stat(real).catch((error) => fsError(error, shown))
      if (!info.isDirectory()) throw new WorkspaceError('NOT_A_DIRECTORY', `"${shown}" is a file, not a directory; use read_file to read it.`)
      const depth = args.depth ?? 1
      const lines: string[] = []
      let capped = false

      const walk = async (dir: string, prefix: string, level: number): Promise<void> => {
        checkAborted(call)
        // Only the requested directory must be readable; an unreadable subdirectory is marked, not fatal.
        const entries: Dirent[] | undefined = await readdir(dir, { withFileTypes: true })
          .catch((error) => (level === 1 ? fsError(error, shown) : undefined))
        if (!entries) return void (lines[lines.length - 1] += ' (unreadable)')
        entries.sort((a, b) => byName(a.name, b.name))
        for (const entry of entries) {
          if (lines.length >= cap) return void (capped = true)
          const relative = prefix + entry.name
          if (entry.isSymbolicLink()) lines.push(`${relative}@`)
          else if (!entry.isDirectory()) lines.push(relative)
          else if (SKIPPED_DIRS.has(entry.name)) lines.push(`${relative}/ (not listed)`)
          else if (isProtected(path.join(dir, entry.name))) lines.push(`${relative}/ (not listed: goalkeeper's session logs)`)
          else {
            lines.push(`${relative}/`)
            if (level < depth) await walk(path.join(dir, entry.name), `${relative}/`, level + 1)
          }
        }
      }
      await walk(real, '', 1)
      if (!lines.length) return `(${shown} is empty)`
      if (capped) lines.push(`[Listing stopped at ${cap} entries; list a subdirectory or use a smaller depth.]`)
      return lines.join('\n')
    },
  }
}
