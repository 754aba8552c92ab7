import path from 'node:path'
import { lstat, mkdir } from 'node:fs/promises'
import type { ToolDefinition } from '@goalkeeper/tools'
import { WorkspaceError, fsError } from '../errors.ts'
import { replaceFile } from '../checked-io.ts'
import { countLines } from '../text.ts'
import type { Workspace } from '../workspace.ts'

interface Args { path: string; content: string }

export function writeFileTool(ws: Workspace): ToolDefinition<Args> {
  return {
    name: 'write_file',
    description: 'Create a file or replace its whole content (missing parent directories are created). '
      + 'To change part of an existing file prefer edit_file.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the workspace root.' },
        content: { type: 'string', description: 'The complete new content of the file.' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    async execute(args, call) {
      const { real, shown } = await ws.resolve(call, args.path)
      const before = await lstat(real).catch(() => undefined)
      if (before?.isDirectory()) throw new WorkspaceError('IS_A_DIRECTORY', `"${shown}" is a directory; give a file path.`)
      await mkdir(path.dirname(real), { recursive: true }).catch((error) => fsError(error, shown))
      await replaceFile(real, shown, args.content)
      const size = Buffer.byteLength(args.content)
      return `${before ? 'Overwrote' : 'Created'} ${shown} (${countLines(args.content)} lines, ${size} bytes).`
    },
  }
}
