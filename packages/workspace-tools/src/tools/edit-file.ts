import { readFile, stat, writeFile } from 'node:fs/promises'
import type { ToolDefinition } from '@goalkeeper/tools'
import { WorkspaceError, fsError } from '../errors.ts'
import { lineAt } from '../text.ts'
import type { Workspace } from '../workspace.ts'

interface Args { path: string; old_string: string; new_string: string; replace_all?: boolean }

const occurrences = (text: string, search: string) => text.split(search).length - 1

export function editFileTool(ws: Workspace): ToolDefinition<Args> {
  return {
    name: 'edit_file',
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
      const { real, shown } = await ws.resolve(call, args.path)
      const info = await stat(real).catch((error) => fsError(error, shown))
      if (!info.isFile()) throw new WorkspaceError('NOT_A_FILE', `"${shown}" is not a regular file.`)
      const text = await readFile(real, 'utf8').catch((error) => fsError(error, shown))
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
      await writeFile(real, text.split(search).join(replacement)).catch((error) => fsError(error, shown))
      return `Edited ${shown}: replaced ${count} occurrence${count === 1 ? '' : 's'} (first at line ${first}).`
    },
  }
}
