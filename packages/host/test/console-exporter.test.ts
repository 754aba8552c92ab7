import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { createConsoleExporter, LogLevel, parseLogLevel, redact } from '../src/index.ts'

function capture(level: number, env: Record<string, string> = {}) {
  const root = new Context()
  const chunks: string[] = []
  root.logger.exporter(createConsoleExporter({ level, env, stream: { write: (text: string) => chunks.push(text) } }))
  return { root, text: () => chunks.join('') }
}

describe('console exporter', () => {
  it('prints one tagged line per message at or above the level, with %c values shown', () => {
    const { root, text } = capture(LogLevel.warn)
    const logger = root.logger('agent')
    logger.error('failed %c', 'step 3')
    logger.warn('two\nlines')
    logger.info('hidden')
    logger.debug('hidden too')
    expect(text()).toBe('[E] agent failed step 3\n[W] agent two\n    lines\n')
  })

  it('shows an error as its message below debug and with its stack at debug', () => {
    const quiet = capture(LogLevel.info)
    quiet.root.logger('x').error(new Error('100% broken'))
    expect(quiet.text()).toBe('[E] x Error: 100% broken\n')

    const loud = capture(LogLevel.debug)
    loud.root.logger('x').error(new Error('broken'))
    expect(loud.text()).toMatch(/^\[E\] x Error: broken\n\s+at /)
  })

  it('masks values of *_KEY, *_TOKEN and *_SECRET environment variables', () => {
    const env = { DEEPSEEK_API_KEY: 'sk-live-1234567890', GH_TOKEN: 'ghp_abcdef', APP_SECRET: 'hunter22', SHORT_KEY: 'abc', HOME: '/home/me/x' }
    const { root, text } = capture(LogLevel.info, env)
    root.logger('model').info('request with sk-live-1234567890 and ghp_abcdef, hunter22, abc, /home/me/x')
    expect(text()).toBe('[I] model request with [redacted DEEPSEEK_API_KEY] and [redacted GH_TOKEN], [redacted APP_SECRET], abc, /home/me/x\n')
    expect(redact(JSON.stringify({ key: 'a"quoted"secret' }), { X_KEY: 'a"quoted"secret' })).toBe('{"key":"[redacted X_KEY]"}')
  })

  it('masks by the project\'s one secret rule: a DATABASE_PASSWORD, a credential URL, a bearer token', () => {
    const env = { DATABASE_PASSWORD: 'pg-secret-value', CACHE_URL: 'redis://cache:cache-secret-value@cache:6379' }
    const { root, text } = capture(LogLevel.info, env)
    root.logger('db').info('login with pg-secret-value failed; password cache-secret-value; header Bearer abc123def456')
    expect(text()).toBe('[I] db login with [redacted DATABASE_PASSWORD] failed; password [redacted CACHE_URL]; header Bearer ***\n')
  })

  it('receives Cordis\'s own errors: a throwing disposer is logged, not lost', async () => {
    const { root, text } = capture(LogLevel.error)
    const fiber = await root.plugin({
      name: 'bad-disposer',
      apply: () => () => {
        throw new Error('disposer exploded')
      },
    })
    await fiber.dispose()
    expect(text()).toContain('[E] bad-disposer Error: disposer exploded')
  })

  it('parses level names and rejects unknown ones with a hint', () => {
    expect(parseLogLevel('DEBUG')).toBe(3)
    expect(() => parseLogLevel('loud')).toThrow('unknown log level "loud"')
  })
})
