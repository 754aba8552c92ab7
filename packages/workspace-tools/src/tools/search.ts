import path from 'node:path'
import { lstat, readdir } from 'node:fs/promises'
import type { ToolDefinition } from '@goalkeeper/tools'
import { clip } from '@goalkeeper/kit'
import { WorkspaceError, fsError } from '../errors.ts'
import { openRegularFile } from '../checked-io.ts'
import { LineMatcher } from '../line-matcher.ts'
import { globMatcher } from '../glob.ts'
import { SKIPPED_DIRS, byName, looksBinary } from '../text.ts'
import { checkAborted, type Workspace } from '../workspace.ts'
import { openParent, swapped, type Dir } from '../walk.ts'
import { located, text } from './shown.ts'

interface Args { pattern: string; path?: string; glob?: string; case_sensitive?: boolean }

/** Larger files are skipped (and counted): they are almost always generated or data. */
export const MAX_FILE_BYTES = 2 * 1024 * 1024
const MAX_LINE_CHARS = 300

export function searchTool(ws: Workspace): ToolDefinition<Args> {
  const cap = ws.limits.maxSearchResults
  return {
    name: 'search',
    kind: 'search',
    title: (args) => `Search ${JSON.stringify(text(args.pattern) ?? '')}${text(args.path) ? ` in ${args.path}` : ''}`,
    locations: (args) => located(args.path ?? '.'),
    description: 'Search file contents with a JavaScript regular expression, line by line. Returns "path:line: text" '
      + `for at most ${cap} matching lines. Skips node_modules, .git, binary files, symbolic links and files over `
      + `${MAX_FILE_BYTES / 1024 / 1024} MB. Case-insensitive unless case_sensitive is true. A search that takes `
      + `longer than ${ws.limits.searchTimeoutMs} ms is stopped.`,
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', minLength: 1, description: 'Regular expression (JavaScript syntax), e.g. "function\\s+main".' },
        path: { type: 'string', description: 'File or directory to search, relative to the workspace root (default: the root).' },
        glob: { type: 'string', description: 'Only search files matching this glob, e.g. "*.ts" (file name) or "src/**/*.test.ts" (path from `path`).' },
        case_sensitive: { type: 'boolean', description: 'Match case exactly (default false).' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    async execute(args, call) {
      const flags = args.case_sensitive ? '' : 'i'
      try {
        // Compiled here only to report a syntax error at once; matching runs on a worker thread.
        new RegExp(args.pattern, flags)
      } catch (error) {
        throw new WorkspaceError('INVALID_REGEX', `${(error as Error).message}. `
          + 'Escape characters such as ( ) [ ] { } . * + ? | \\ with a backslash to match them literally.')
      }
      let matches: (relative: string) => boolean = () => true
      if (args.glob) {
        try {
          matches = globMatcher(args.glob)
        } catch (error) {
          throw new WorkspaceError('INVALID_GLOB', `Invalid glob: ${(error as Error).message}.`)
        }
      }
      const target = await ws.resolve(call, args.path ?? '.')
      const { shown, root, isProtected } = target
      const results: string[] = []
      let files = 0
      let skippedLarge = 0
      let capped = false

      /** The bytes of a regular file within the size limit; anything else (swapped, unreadable, too large) is skipped. */
      const readCandidate = async (dir: Dir, name: string, display: string) => {
        const opened = await openRegularFile(dir.at(name), display, 'read').catch(() => undefined)
        if (!opened) return undefined
        try {
          if (opened.info.size <= MAX_FILE_BYTES) return await opened.handle.readFile()
          skippedLarge += 1
        } catch {
          // Unreadable now: skipped like an unreadable directory.
        } finally {
          await opened.handle.close()
        }
      }
      const matcher = new LineMatcher(args.pattern, flags, ws.limits.searchTimeoutMs, call.signal)
      /** Files are opened through the descriptor of the directory holding them (see walk.ts). */
      const searchFile = async (dir: Dir, name: string) => {
        checkAborted(call)
        const display = path.relative(root, path.join(dir.real, name))
        const bytes = await readCandidate(dir, name, display)
        if (!bytes || looksBinary(bytes)) return
        files += 1
        // One more than still fits, to know whether the cap cut the results.
        for (const [line, text] of await matcher.match(bytes.toString('utf8'), cap - results.length + 1)) {
          if (results.length >= cap) return void (capped = true)
          results.push(`${display}:${line}: ${clip(text, MAX_LINE_CHARS, '...')}`)
        }
      }
      const walk = async (dir: Dir, relative: string): Promise<void> => {
        checkAborted(call)
        const entries = await readdir(dir.self, { withFileTypes: true }).catch(() => [])
        entries.sort((a, b) => byName(a.name, b.name))
        for (const entry of entries) {
          if (capped) return
          const rel = relative ? `${relative}/${entry.name}` : entry.name
          if (isProtected(path.join(dir.real, entry.name))) continue
          if (entry.isDirectory()) {
            if (SKIPPED_DIRS.has(entry.name)) continue
            // Gone, or swapped for a link, since it was read: skipped like an unreadable one.
            const sub = await dir.enter(entry.name, shown).catch(() => undefined)
            if (!sub) continue
            try {
              await walk(sub, rel)
            } finally {
              await sub.close()
            }
          } else if (entry.isFile() && matches(rel)) {
            await searchFile(dir, entry.name)
          }
        }
      }
      try {
        const { dir: parent, name } = await openParent(target)
        try {
          const info = await lstat(parent.at(name)).catch((error) => fsError(error, shown))
          if (info.isSymbolicLink()) throw swapped(shown, shown)
          if (info.isDirectory()) {
            const top = name === '.' ? parent : await parent.enter(name, shown)
            try {
              await walk(top, '')
            } finally {
              if (top !== parent) await top.close()
            }
          } else if (!info.isFile()) {
            throw new WorkspaceError('NOT_A_FILE', `"${shown}" is neither a regular file nor a directory.`)
          } else {
            await searchFile(parent, name)
          }
        } finally {
          await parent.close()
        }
      } finally {
        await matcher.close()
      }

      const notes: string[] = []
      if (capped) notes.push(`[Showing the first ${cap} matching lines; narrow the pattern, path or glob to see the rest.]`)
      if (skippedLarge) notes.push(`[${skippedLarge} file(s) over ${MAX_FILE_BYTES / 1024 / 1024} MB were not searched.]`)
      if (!results.length) {
        return [`No matches for /${args.pattern}/${args.case_sensitive ? '' : 'i'} in ${shown} (${files} file(s) searched).`, ...notes].join('\n')
      }
      return [...results, ...notes].join('\n')
    },
  }
}
