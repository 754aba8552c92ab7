import { createInterface } from 'node:readline'
import type { ToolDefinition } from '@goalkeeper/tools'
import { clip } from '@goalkeeper/kit'
import { WorkspaceError } from '../errors.ts'
import { openRegularFile } from '../checked-io.ts'
import { atTarget } from '../walk.ts'
import { SNIFF_BYTES, looksBinary } from '../text.ts'
import type { Workspace } from '../workspace.ts'
import { located, text } from './shown.ts'

interface Args { path: string; start_line?: number; end_line?: number }

const number = (line: number) => String(line).padStart(6, ' ')

export function readFileTool(ws: Workspace): ToolDefinition<Args> {
  const cap = ws.limits.maxReadBytes
  return {
    name: 'read_file',
    kind: 'read',
    title: (args) => {
      const range = args.start_line || args.end_line ? ` (lines ${args.start_line ?? 1}-${args.end_line ?? 'end'})` : ''
      return `Read ${text(args.path)}${range}`
    },
    locations: (args) => located(args.path, args.start_line),
    description: 'Read a text file in the workspace. Each output line starts with its line number and a tab '
      + `(not part of the file). At most ${cap} bytes are returned per call; for longer files read further `
      + 'ranges with start_line/end_line (1-based, inclusive). Binary files are refused.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the workspace root (an absolute path inside the root also works).' },
        start_line: { type: 'integer', minimum: 1, description: 'First line to return (default 1).' },
        end_line: { type: 'integer', minimum: 1, description: 'Last line to return (default: as far as the size limit allows).' },
      },
      required: ['path'],
      additionalProperties: false,
    },
    async execute(args, call) {
      const target = await ws.resolve(call, args.path)
      const { shown } = target
      const start = args.start_line ?? 1
      const end = args.end_line ?? Infinity
      if (end < start) throw new WorkspaceError('INVALID_RANGE', `end_line (${end}) is before start_line (${start}).`)
      const { handle, info } = await atTarget(target, (where) => openRegularFile(where, shown, 'read'))
      try {
        if (info.size === 0) return `(empty file: ${shown})`
        const { buffer, bytesRead } = await handle.read(Buffer.alloc(Math.min(SNIFF_BYTES, info.size)), 0, Math.min(SNIFF_BYTES, info.size), 0)
        if (looksBinary(buffer.subarray(0, bytesRead))) {
          throw new WorkspaceError('BINARY_FILE', `"${shown}" looks like a binary file (${info.size} bytes); read_file only shows text.`)
        }
        const stream = handle.createReadStream({ start: 0, autoClose: false })
        const lines = createInterface({ input: stream, crlfDelay: Infinity })
        const out: string[] = []
        let bytes = 0
        let line = 0
        let stoppedBy: 'cap' | 'range' | undefined
        for await (const text of lines) {
          line += 1
          if (line < start) continue
          if (line > end) { stoppedBy = 'range'; break }
          const rendered = `${number(line)}\t${text}`
          const size = Buffer.byteLength(rendered) + 1
          if (bytes + size > cap) {
            stoppedBy = 'cap'
            // A single line larger than the whole budget is still shown, cut, so the call makes progress.
            if (!out.length) out.push(clip(rendered, cap, '') + ` [line ${line} cut at ${cap} bytes]`)
            break
          }
          out.push(rendered)
          bytes += size
        }
        lines.close()
        stream.destroy()
        if (line < start && !stoppedBy) return `[${shown} has ${line} lines; start_line ${start} is past the end.]`
        if (stoppedBy === 'cap') {
          const last = start + out.length - 1
          out.push(`[Stopped at the ${cap}-byte limit after line ${last} of ${shown} (${info.size} bytes). Continue with start_line=${last + 1}.]`)
        } else if (!stoppedBy && start > 1) {
          out.push(`[End of file: ${shown} has ${line} lines.]`)
        }
        return out.join('\n')
      } finally {
        await handle.close()
      }
    },
  }
}
