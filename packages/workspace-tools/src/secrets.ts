import { createMasker, isSecretVariable, type Masker } from '@goalkeeper/kit'
import type { ToolDefinition, ToolResult } from '@goalkeeper/tools'

/**
 * The environment for commands, without credential variables by the project's secret rule
 * (`isSecretVariable` in @goalkeeper/kit): command output reaches the session and the model.
 */
export function commandEnv(scrub: boolean): NodeJS.ProcessEnv {
  if (!scrub) return { ...process.env }
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) if (!isSecretVariable(name, value)) env[name] = value
  return env
}

const maskResult = (result: string | ToolResult, masker: Masker): string | ToolResult => {
  if (typeof result === 'string') return masker.mask(result)
  const error = result.error && { ...result.error, message: masker.mask(result.error.message) }
  return { ...result, content: masker.mask(result.content), ...(error ? { error } : {}) }
}

/**
 * The tool, with the environment's secrets masked as `***` in its results and error messages: a model may
 * read `.env`, search for a key or print it from a command, and everything a tool returns is stored in the
 * session. Secret shapes without a known value are left alone: file contents a model reads and then edits
 * must come back unchanged, and a URL with user info in a README is not a credential of this process.
 */
export function masking<A>(tool: ToolDefinition<A>): ToolDefinition<A> {
  return {
    ...tool,
    async execute(args, call) {
      // Read per call: the environment may change while the plugin is loaded.
      const masker = createMasker({ shapes: false })
      try {
        return maskResult(await tool.execute(args, call), masker)
      } catch (error) {
        if (error instanceof Error) error.message = masker.mask(error.message)
        throw error
      }
    },
  }
}
