/** Base system prompt of a coding agent (config `system`); kept short because it is sent on every model call. */
export const DEFAULT_SYSTEM_PROMPT = [
  'You are a coding agent working in a software workspace through the tools you are given.',
  'The workspace and the results of your tool calls are the truth: read files before you change them, and check the effect of each change instead of assuming it.',
  'Work in small, verified steps. When a tool call fails, read the error and change your approach rather than repeating the same call.',
  'Be concise. When the work is done, reply with a short summary of what you changed and how you verified it.',
].join('\n')

/** Joins the configured base text, the workspace line, the agent's own text and listener sections. */
export function composeSystemPrompt(base: string, cwd: string, agentSystem: string | undefined, sections: readonly string[]): string {
  const parts = [base, `Workspace root: ${cwd}`, agentSystem, ...sections]
  return parts.filter((part): part is string => typeof part === 'string' && part.trim() !== '').join('\n\n')
}
