import { lstat } from 'node:fs/promises'
import type { ToolDefinition } from '@goalkeeper/tools'
import { WorkspaceError } from '../errors.ts'
import { replaceFile } from '../checked-io.ts'
import { countLines } from '../text.ts'
import { atTarget } from '../walk.ts'
import type { Workspace } from '../workspace.ts'
import { located, text } from './shown.ts'

interface Args { path: string; content: string }

export function writeFileTool(ws: Workspace): ToolDefinition<Args> {
  return {
    name: 'write_file',
    kind: 'edit',
    title: (args) => `Write ${text(args.path)}`,
    locations: (args) => located(args.path),
    // Only a new file has a known old text (none); an overwrite's old text is gone.
    diff: (args, result) => (result.ok && text(args.path) && text(args.content) !== undefined && result.content.startsWith('Created ')
      ? { path: args.path, oldText: null, newText: args.content }
      : undefined),
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
      const target = await ws.resolve(call, args.path)
      const { shown } = target
      // Missing parents are made on the way down, each inside the directory the walk holds.
      const before = await atTarget(target, async (where) => {
        const existing = await lstat(where).catch(() => undefined)
        if (existing?.isDirectory()) throw new WorkspaceError('IS_A_DIRECTORY', `"${shown}" is a directory; give a file path.`)
        await replaceFile(where, shown, args.content)
        return existing
      }, { create: true })
      const size = Buffer.byteLength(args.content)
      return `${before ? 'Overwrote' : 'Created'} ${shown} (${countLines(args.content)} lines, ${size} bytes).`
    },
  }
}
