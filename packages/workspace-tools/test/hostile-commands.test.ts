import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { commandEnv } from '../src/secrets.ts'
import { setup, type Setup } from './helpers.ts'

let t: Setup
beforeEach(async () => {
  t = await setup({ maxOutputChars: 1000 })
})
afterEach(async () => {
  await t.dispose()
})

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Sets environment variables for one test. */
const withEnv = async (vars: Record<string, string>, body: () => Promise<void>) => {
  Object.assign(process.env, vars)
  try {
    await body()
  } finally {
    for (const name of Object.keys(vars)) delete process.env[name]
  }
}

describe('run_command with hostile commands and output', () => {
  it('refuses a command containing a NUL character with a clear error', async () => {
    const result = await t.run('run_command', { command: 'echo a\u0000b' })
    expect(result.error?.code).toBe('INVALID_COMMAND')
    expect(result.content).toContain('NUL')
  })

  it('shows binary output without NUL or control bytes, and says it was binary', async () => {
    const result = await t.run('run_command', { command: "printf 'a\\000b\\001c\\033[1mbold\\n'; head -c 2000 /dev/urandom" })
    expect(result.ok).toBe(true)
    expect(result.content).not.toMatch(/[\u0000-\u0008\u000B\u000C\u000E-\u001A\u001C-\u001F\u007F]/)
    expect(result.content.startsWith('a\uFFFDb\uFFFDc\u001b[1mbold\n')).toBe(true)
    expect(result.content).toContain('[The output contains binary data; bytes that are not text are shown as \uFFFD.]')
    expect((await t.run('run_command', { command: 'echo plain' })).content).not.toContain('binary data')
  })

  it('never cuts a character in half when capping output', async () => {
    // Odd offsets everywhere: a one-byte prefix, then 4-byte characters (two UTF-16 code units each).
    const result = await t.run('run_command', { command: `printf 'x'; for i in $(seq 1 3000); do printf '\\360\\237\\230\\200'; done` })
    expect(result.content).toContain('characters omitted')
    expect(result.content).not.toMatch(LONE_SURROGATE)
  })

  it('keeps memory bounded for a command that prints hundreds of megabytes quickly', async () => {
    const before = process.memoryUsage().rss
    const result = await t.run('run_command', { command: "head -c 300000000 /dev/zero | tr '\\000' 'y'; echo; echo TAIL" })
    expect(result.ok).toBe(true)
    expect(result.content.length).toBeLessThan(1300)
    expect(result.content).toMatch(/\[\.\.\. 2999\d{5} characters omitted; output capped at 1000 characters \.\.\.\]/)
    expect(result.content).toMatch(/TAIL\n\[Exit code 0/)
    // Reading 300 MB must not hold it: far less than the output size stays resident.
    expect(process.memoryUsage().rss - before).toBeLessThan(150_000_000)
  })
})

describe('secrets in the command environment', () => {
  it('hides variables whose names or values look like credentials', async () => {
    await withEnv({
      PGPASSWORD: 'pg-secret-value',
      MYSQL_PWD: 'mysql-secret-value',
      GK_TEST_DATABASE_URL: 'postgres://app:db-secret-value@db.internal:5432/app',
      GK_TEST_COOKIE: 'session=cookie-secret-value',
      GK_TEST_PLAIN_URL: 'https://example.com/path',
    }, async () => {
      const result = await t.run('run_command', { command: 'echo "[$PGPASSWORD][$MYSQL_PWD][$GK_TEST_DATABASE_URL][$GK_TEST_COOKIE][$GK_TEST_PLAIN_URL][$PWD]"' })
      expect(result.content.split('\n')[0]).toBe(`[][][][][https://example.com/path][${t.workspace}]`)
    })
  })

  it('masks the values of hidden variables when a command prints them from elsewhere (a .env file)', async () => {
    await withEnv({ GK_TEST_API_KEY: 'sk-live-0123456789abcdef', GK_TEST_SHORT_TOKEN: 'abc' }, async () => {
      await fs.writeFile(path.join(t.workspace, '.env'), 'GK_TEST_API_KEY=sk-live-0123456789abcdef\nGK_TEST_SHORT_TOKEN=abc\n')
      const result = await t.run('run_command', { command: 'cat .env' })
      expect(result.content).not.toContain('sk-live-0123456789abcdef')
      expect(result.content).toContain('GK_TEST_API_KEY=***')
      // Too short to mask without mangling ordinary output.
      expect(result.content).toContain('GK_TEST_SHORT_TOKEN=abc')
    })
  })

  it('masks hidden values in what the file tools return too, and in their error messages', async () => {
    await withEnv({ GK_TEST_API_KEY: 'sk-live-0123456789abcdef' }, async () => {
      await fs.writeFile(path.join(t.workspace, '.env'), 'GK_TEST_API_KEY=sk-live-0123456789abcdef\n')
      expect((await t.run('read_file', { path: '.env' })).content).toBe('     1\tGK_TEST_API_KEY=***')
      expect((await t.run('search', { pattern: 'sk-live' })).content).toBe('.env:1: GK_TEST_API_KEY=***')
      const missing = await t.run('read_file', { path: 'sk-live-0123456789abcdef.txt' })
      expect(missing.error?.code).toBe('NOT_FOUND')
      expect(JSON.stringify(missing)).not.toContain('sk-live-0123456789abcdef')
    })
  })

  it('leaves the environment alone when scrubSecrets is off', () => {
    process.env.GK_TEST_TOKEN = 'kept-when-off'
    try {
      expect(commandEnv(false).GK_TEST_TOKEN).toBe('kept-when-off')
      expect(commandEnv(true).GK_TEST_TOKEN).toBeUndefined()
    } finally {
      delete process.env.GK_TEST_TOKEN
    }
  })
})
