import type { FileHandle } from 'node:fs/promises'
import type { ToolDefinition } from '@goalkeeper/tools'
import { WorkspaceError } from '../errors.ts'
import { openRegularFile, overwrite } from '../checked-io.ts'
import { atTarget } from '../walk.ts'
import { lineAt } from '../text.ts'
import type { Workspace } from '../workspace.ts'
import { located, text } from './shown.ts'

interface Args { path: string; old_string: string; new_string: string; replace_all?: boolean }

const occurrences = (text: string, search: string) => text.split(search).length - 1

/** The whole file is held in memory (twice, while replacing); larger files are for run_command tools like sed. */
export const MAX_EDIT_BYTES = 16 * 1024 * 1024

export function editFileTool(ws: Workspace): ToolDefinition<Args> {
  return {
    name: 'edit_file',
    kind: 'edit',
    title: (args) => `Edit ${text(args.path)}`,
    locations: (args) => located(args.path),
    diff: (args, result) => (result.ok && text(args.path) && text(args.old_string) !== undefined && text(args.new_string) !== undefined
      ? { path: args.path, oldText: args.old_string, newText: args.new_string }
      : undefined),
    description: 'Replace an exact piece of text in an existing file. old_string must match the file exactly '
      + '(whitespace and indentation included) and occur exactly once, unless replace_all is true. '
      + 'Include enough surrounding lines to make it unique. Read the file first.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the workspace root.' },
        old_string: { type: 'string', minLength: 1, description: 'The exact text to replace.' },
        new_string: { type: 'string', description: 'The replacement text.' },
        replace_all: { type: 'boolean', description: 'Replace every occurrence instead of requiring a unique one (default false).' },
      },
      required: ['path', 'old_string', 'new_string'],
      additionalProperties: false,
    },
    async execute(args, call) {
      const target = await ws.resolve(call, args.path)
      const { shown } = target
      const { handle, info } = await atTarget(target, (where) => openRegularFile(where, shown, 'update'))
      try {
        if (info.size > MAX_EDIT_BYTES) {
          throw new WorkspaceError('FILE_TOO_LARGE', `"${shown}" is ${info.size} bytes; edit_file handles files up to ${MAX_EDIT_BYTES / 1024 / 1024} MiB. Use run_command (e.g. sed) for larger files.`)
        }
        return await replaceIn(handle, shown, (await handle.readFile()).toString('utf8'), args)
      } finally {
        await handle.close()
      }
    },
  }
}

/** Applies the edit through the same open handle, so the file that was read is the file that is written. */
async function replaceIn(handle: FileHandle, shown: string, text: string, args: Args): Promise<string> {
  let { old_string: search, new_string: replacement } = args
  // Models write "\n"; a CRLF file would otherwise never match.
  if (!text.includes(search) && text.includes('\r\n') && search.includes('\n')) {
    search = search.replace(/\r?\n/g, '\r\n')
    replacement = replacement.replace(/\r?\n/g, '\r\n')
  }
  if (search === replacement) throw new WorkspaceError('EDIT_NO_CHANGE', 'old_string and new_string are identical; nothing to change.')
  const count = occurrences(text, search)
  if (count === 0) {
    throw new WorkspaceError('EDIT_NO_MATCH', `old_string was not found in ${shown} (0 occurrences). It must match the file exactly, `
      + 'including whitespace and indentation; read the file again and copy the text.')
  }
  if (count > 1 && !args.replace_all) {
    throw new WorkspaceError('EDIT_AMBIGUOUS', `old_string occurs ${count} times in ${shown}. Include more surrounding `
      + 'context so it matches exactly once, or set replace_all to true to replace every occurrence.')
  }
  const first = lineAt(text, text.indexOf(search))
  await overwrite(handle, text.split(search).join(replacement))
  return `Edited ${shown}: replaced ${count} occurrence${count === 1 ? '' : 's'} (first at line ${first}).`
}
