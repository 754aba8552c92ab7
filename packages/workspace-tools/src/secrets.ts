import type { ToolDefinition, ToolResult } from '@goalkeeper/tools'

/**
 * Names of credential variables: a `_`-delimited word such as KEY or TOKEN (`GITHUB_TOKEN`), PASSWORD
 * and the like anywhere (`PGPASSWORD`), or a `_PWD` suffix (`MYSQL_PWD`; `PWD` itself is the cwd).
 */
export const SECRET_NAME = /(^|_)(API_?KEY|KEY|TOKEN|DSN|COOKIE|CREDENTIALS?)(_|$)|PASSWORD|PASSWD|PASSPHRASE|SECRET|_PWD$/i
/** A URL carrying user info (`postgres://user:pass@host`, `https://token@host`), whatever the variable's name. */
const CREDENTIAL_URL = /^[a-z][a-z0-9+.-]*:\/\/([^/\s@]+)@/i
/** Shorter values are not masked in output: they would match ordinary text. */
const MIN_MASKED_CHARS = 8

/**
 * The environment for commands, without credential-like variables (command output reaches the
 * session and the model), and the hidden values, to be masked if a command prints them anyway.
 */
export function commandEnv(scrub: boolean): { env: NodeJS.ProcessEnv; secrets: string[] } {
  if (!scrub) return { env: { ...process.env }, secrets: [] }
  const env: NodeJS.ProcessEnv = {}
  const secrets = new Set<string>()
  for (const [name, value = ''] of Object.entries(process.env)) {
    const userInfo = CREDENTIAL_URL.exec(value)?.[1]
    if (!SECRET_NAME.test(name) && !userInfo) {
      env[name] = value
      continue
    }
    for (const secret of [value, userInfo, userInfo?.slice(userInfo.indexOf(':') + 1)]) {
      if (secret && secret.length >= MIN_MASKED_CHARS) secrets.add(secret)
    }
  }
  // Longest first, so a value containing another is masked whole.
  return { env, secrets: [...secrets].sort((a, b) => b.length - a.length) }
}

/** Replaces every hidden value in `text` with `***`. */
export const mask = (text: string, secrets: readonly string[]) => secrets.reduce((out, secret) => out.split(secret).join('***'), text)

const maskResult = (result: string | ToolResult, secrets: readonly string[]): string | ToolResult => {
  if (typeof result === 'string') return mask(result, secrets)
  const error = result.error && { ...result.error, message: mask(result.error.message, secrets) }
  return { ...result, content: mask(result.content, secrets), ...(error ? { error } : {}) }
}

/**
 * The tool, with hidden values masked in its results and error messages: a model may read `.env`,
 * search for a key or print it from a command, and everything a tool returns is stored in the session.
 */
export function masking<A>(tool: ToolDefinition<A>): ToolDefinition<A> {
  return {
    ...tool,
    async execute(args, call) {
      // Read per call: the environment may change while the plugin is loaded.
      const { secrets } = commandEnv(true)
      try {
        return maskResult(await tool.execute(args, call), secrets)
      } catch (error) {
        if (error instanceof Error) error.message = mask(error.message, secrets)
        throw error
      }
    },
  }
}
