import path from 'node:path'
import { readdir, stat } from 'node:fs/promises'
import type { ToolDefinition } from '@goalkeeper/tools'
import { WorkspaceError, fsError } from '../errors.ts'
import { openRegularFile } from '../checked-io.ts'
import { LineMatcher } from '../line-matcher.ts'
import { globMatcher } from '../glob.ts'
import { SKIPPED_DIRS, byName, looksBinary } from '../text.ts'
import { checkAborted, type Workspace } from '../workspace.ts'

interface Args { pattern: string; path?: string; glob?: string; case_sensitive?: boolean }

/** Larger files are skipped (and counted): they are almost always generated or data. */
export const MAX_FILE_BYTES = 2 * 1024 * 1024
const MAX_LINE_CHARS = 300

export function searchTool(ws: Workspace): ToolDefinition<Args> {
  const cap = ws.limits.maxSearchResults
  return {
    name: 'search',
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
      const { real, shown, root, isProtected } = await ws.resolve(call, args.path ?? '.')
      const info = await stat(real).catch((error) => fsError(error, shown))
      const results: string[] = []
      let files = 0
      let skippedLarge = 0
      let capped = false

      /** The bytes of a regular file within the size limit; anything else (swapped, unreadable, too large) is skipped. */
      const readCandidate = async (file: string, display: string) => {
        const opened = await openRegularFile(file, display, 'read').catch(() => undefined)
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
      const searchFile = async (file: string) => {
        checkAborted(call)
        const display = path.relative(root, file)
        const bytes = await readCandidate(file, display)
        if (!bytes || looksBinary(bytes)) return
        files += 1
        // One more than still fits, to know whether the cap cut the results.
        for (const [line, text] of await matcher.match(bytes.toString('utf8'), cap - results.length + 1)) {
          if (results.length >= cap) return void (capped = true)
          results.push(`${display}:${line}: ${text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)}...` : text}`)
        }
      }
      const walk = async (dir: string, relative: string): Promise<void> => {
        checkAborted(call)
        const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
        entries.sort((a, b) => byName(a.name, b.name))
        for (const entry of entries) {
          if (capped) return
          const full = path.join(dir, entry.name)
          const rel = relative ? `${relative}/${entry.name}` : entry.name
          if (isProtected(full)) continue
          if (entry.isDirectory()) {
            if (!SKIPPED_DIRS.has(entry.name)) await walk(full, rel)
          } else if (entry.isFile() && matches(rel)) {
            await searchFile(full)
          }
        }
      }
      try {
        if (info.isDirectory()) await walk(real, '')
        else if (!info.isFile()) throw new WorkspaceError('NOT_A_FILE', `"${shown}" is neither a regular file nor a directory.`)
        else await searchFile(real)
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
