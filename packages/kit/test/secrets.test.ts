import { describe, expect, it } from 'vitest'
import { createMasker, holdSecret, isSecretVariable, liveMasker, maskDeep, redactedLabel, secretsIn } from '@goalkeeper/kit'

describe('the secret rule', () => {
  it('knows credential variables by name, or by a value that is a URL with user info', () => {
    for (const name of ['DEEPSEEK_API_KEY', 'GH_TOKEN', 'APP_SECRET', 'DATABASE_PASSWORD', 'PGPASSWORD', 'MYSQL_PWD', 'SENTRY_DSN', 'AWS_CREDENTIALS', 'KEY']) {
      expect(isSecretVariable(name, 'value'), name).toBe(true)
    }
    for (const name of ['PWD', 'HOME', 'KEYBOARD', 'MONKEY', 'PATH']) expect(isSecretVariable(name, 'value'), name).toBe(false)
    expect(isSecretVariable('DATABASE_URL', 'postgres://app:pw@db/app')).toBe(true)
    expect(isSecretVariable('HOMEPAGE', 'https://example.com/a@b')).toBe(false)
    // A user name alone is not a credential (the password comes from elsewhere); a token as user name is.
    expect(isSecretVariable('GOALKEEPER_DATABASE_URL', 'postgres://gk@127.0.0.1:5432/goalkeeper')).toBe(false)
    expect(secretsIn({ GOALKEEPER_DATABASE_URL: 'postgres://postgres@db.internal/app' })).toEqual([])
    expect(isSecretVariable('REPO', 'https://ghp_0a1b2c3d4e5f@github.com/o/r')).toBe(true)
  })

  it('collects values of at least 8 characters, and the user info and password of credential URLs', () => {
    expect(secretsIn({ GH_TOKEN: 'ghp_abcdef', SHORT_KEY: 'abc', HOME: '/home/me' })).toEqual([{ value: 'ghp_abcdef', name: 'GH_TOKEN' }])
    expect(secretsIn({ DB: 'postgres://app:db-secret-value@db.internal/app' }).map((s) => s.value)).toEqual([
      'postgres://app:db-secret-value@db.internal/app', 'app:db-secret-value', 'db-secret-value',
    ])
  })
})

describe('createMasker', () => {
  it('masks a DATABASE_PASSWORD value like any key or token, as written and escaped in JSON', () => {
    const masker = createMasker({ env: { DATABASE_PASSWORD: 'hunter2hunter2', GH_TOKEN: 'ghp_a"b\\cdef', HOME: '/home/me' } })
    expect(masker.mask('login hunter2hunter2 at /home/me')).toBe('login *** at /home/me')
    expect(masker.mask(JSON.stringify({ token: 'ghp_a"b\\cdef' }))).toBe('{"token":"***"}')
  })

  it('masks the longest secret whole when one contains another, and names it through the label', () => {
    const masker = createMasker({ env: { A_KEY: 'abcdefgh', B_KEY: 'abcdefgh-longer' }, label: (s) => `[redacted ${s.name}]` })
    expect(masker.mask('abcdefgh-longer and abcdefgh')).toBe('[redacted B_KEY] and [redacted A_KEY]')
    expect(masker.secrets.map((s) => s.name)).toEqual(['B_KEY', 'A_KEY'])
  })

  it('masks given values whatever their length, with no environment at all', () => {
    expect(createMasker({ env: {}, values: ['k1', ''] }).mask('key k1 used')).toBe('key *** used')
  })

  it('masks secret shapes with no known value: sk- keys, URL user info, bearer tokens', () => {
    const masker = createMasker({ env: {} })
    expect(masker.mask('key sk-proj-QWERTYUIOPASDF is invalid')).toBe('key sk-pr*** is invalid')
    expect(masker.mask('fetch https://user:pass@host/x failed')).toBe('fetch https://user:***@host/x failed')
    expect(masker.mask('at postgres://app:***@db/x')).toBe('at postgres://app:***@db/x')
    expect(masker.mask('clone https://ghp_0a1b2c3d4e5f:x-oauth-basic@github.com/o/r')).toBe('clone https://***@github.com/o/r')
    expect(masker.mask('at postgres://gk@127.0.0.1:5432/db#20261201-1:6')).toBe('at postgres://gk@127.0.0.1:5432/db#20261201-1:6')
    expect(masker.mask('clone https://ghp_0a1b2c3d4e5f@github.com/o/r')).toBe('clone https://***@github.com/o/r')
    expect(masker.mask('header was Bearer abc.def-123')).toBe('header was Bearer ***')
    // Prose is not a token.
    expect(masker.mask('send a bearer token in the header')).toBe('send a bearer token in the header')
  })

  it('redactedLabel names a secret from the environment by its variable, and a configured value only as ***', () => {
    const masker = createMasker({ env: { API_TOKEN: 'tok-5f3a9c1e77' }, values: ['configured-key-123'], label: redactedLabel })
    expect(masker.mask('tok-5f3a9c1e77 and configured-key-123')).toBe('[redacted API_TOKEN] and ***')
  })

  it('does not mask a label again, and leaves shapes alone when they are turned off', () => {
    const labelled = createMasker({ env: { API_TOKEN: 'tok-5f3a9c1e77' }, label: (s) => `[redacted ${s.name}]` })
    expect(labelled.mask('Authorization: Bearer tok-5f3a9c1e77')).toBe('Authorization: Bearer [redacted API_TOKEN]')
    const plain = createMasker({ env: { API_TOKEN: 'tok-5f3a9c1e77' }, shapes: false })
    expect(plain.mask('Bearer tok-5f3a9c1e77 and sk-proj-QWERTYUIOPASDF')).toBe('Bearer *** and sk-proj-QWERTYUIOPASDF')
  })

  it('reads process.env by default', () => {
    process.env.GK_KIT_TEST_PASSWORD = 'from-the-process'
    try {
      expect(createMasker().mask('pw from-the-process')).toBe('pw ***')
    } finally {
      delete process.env.GK_KIT_TEST_PASSWORD
    }
  })
})

describe('encoded forms of a known secret', () => {
  const secret = 'sk-live-9f8e7d6c5b4a3210'
  const masker = createMasker({ env: { DEEPSEEK_API_KEY: secret }, shapes: false })
  it('masks it in base64 at every alignment (standard and URL-safe), hex in either case, and URL-encoded', () => {
    for (const prefix of ['', 'A', 'AB', 'KEY=', 'DEEPSEEK_API_KEY=']) {
      const base64 = Buffer.from(`${prefix}${secret}\nPATH=/bin\n`).toString('base64')
      const masked = masker.mask(base64)
      expect(masked, prefix).toContain('***')
      expect(Buffer.from(masked.replace(/\*+/g, ''), 'base64').toString('latin1')).not.toContain(secret.slice(4, 12))
      expect(masker.mask(base64.replace(/\+/g, '-').replace(/\//g, '_'))).toContain('***')
    }
    const hex = Buffer.from(`x${secret}y`).toString('hex')
    expect(masker.mask(hex)).toBe(`${Buffer.from('x').toString('hex')}***${Buffer.from('y').toString('hex')}`)
    expect(masker.mask(hex.toUpperCase())).toContain('***')
    expect(masker.mask(`q=${encodeURIComponent('a b' + secret)}`)).toBe('q=a%20b***')
  })

  it('maskDeep masks every string of a record, keys included, and leaves values without secrets as they are', () => {
    const clean = { a: [1, { b: 'text' }] }
    expect(maskDeep(clean, masker)).toBe(clean)
    expect(maskDeep({ args: { cmd: `echo ${secret}` }, list: [secret], [secret]: 1 }, masker)).toEqual({ args: { cmd: 'echo ***' }, list: ['***'], '***': 1 })
  })

  it('maskDeep leaves a cycle for the serialiser to report instead of overflowing the stack', () => {
    const circular: any = { note: secret, shared: { n: 1 } }
    circular.self = circular
    circular.list = [circular.shared, circular.shared]
    const masked = maskDeep(circular, masker) as any
    expect(masked.note).toBe('***')
    expect(masked.self).toBe(circular)
    expect(() => JSON.stringify(masked)).toThrow(TypeError)
  })
})

describe('held secrets', () => {
  const key = 'c0ffee'.repeat(10) + 'beef'

  it('are masked by every masker made while they are held, and by a live masker made before', () => {
    const live = liveMasker({ env: {} })
    expect(live.mask(`key ${key}`)).toBe(`key ${key}`)
    const release = holdSecret(key)
    try {
      expect(createMasker({ env: {}, shapes: false }).mask(`key ${key}.`)).toBe('key ***.')
      expect(live.mask(`key ${key}`)).toBe('key ***')
      expect(live.secrets.map((secret) => secret.value)).toEqual([key])
    } finally {
      release()
    }
    expect(live.mask(`key ${key}`)).toBe(`key ${key}`)
    expect(createMasker({ env: {} }).mask(key)).toBe(key)
  })

  it('stay held while any holder holds them, and a release twice counts once', () => {
    const first = holdSecret(key)
    const second = holdSecret(key)
    first()
    first()
    expect(createMasker({ env: {} }).mask(key)).toBe('***')
    second()
    expect(createMasker({ env: {} }).mask(key)).toBe(key)
  })
})

describe('a known secret in other encodings and split up', () => {
  const secret = 'hunter2-Secret-Value-42'
  const bytes = [...Buffer.from(secret)]
  const masker = createMasker({ env: { MY_TOKEN: secret }, shapes: false, label: (s) => `[redacted ${s.name}]` })
  const hex = (byte: number) => byte.toString(16).padStart(2, '0')
  const base32 = (text: string) => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'
    const bits = [...Buffer.from(text)].map((b) => b.toString(2).padStart(8, '0')).join('')
    return (bits.match(/.{1,5}/g) ?? []).map((chunk) => alphabet[parseInt(chunk.padEnd(5, '0'), 2)]).join('')
  }
  const encodings: Record<string, string> = {
    'spaced hex (od -An -tx1)': bytes.map((b, i) => `${i % 16 === 0 ? '\n' : ''} ${hex(b)}`).join(''),
    'hex with colons': bytes.map(hex).join(':'),
    'C bytes': bytes.map((b) => `0x${hex(b)}`).join(', '),
    '\\x escapes': bytes.map((b) => `\\x${hex(b)}`).join(''),
    'per-byte %xx': bytes.map((b) => `%${hex(b).toUpperCase()}`).join(''),
    'split over two lines': `${secret.slice(0, 10)}\n${secret.slice(10)}`,
    'split over two lines, JSON-escaped': JSON.stringify(`${secret.slice(0, 10)}\n${secret.slice(10)}`),
    reversed: [...secret].reverse().join(''),
    base32: base32(secret),
    'base32 after a prefix, wrapped': base32(`MY_TOKEN=${secret}\n`).replace(/.{19}/g, '$&\n'),
    '\\u00xx escapes': bytes.map((b) => `\\u00${hex(b)}`).join(''),
    '\\u00xx escapes inside JSON': JSON.stringify(bytes.map((b) => `\\u00${hex(b)}`).join('')),
    'one character per space': [...secret].join(' '),
    'one character per line': [...secret].join('\n'),
  }
  for (const [name, encoded] of Object.entries(encodings)) {
    it(`masks it as ${name}`, () => {
      const masked = masker.mask(`before: ${encoded} :after`)
      expect(masked).toContain('[redacted MY_TOKEN]')
      expect(masked.startsWith('before: ')).toBe(true)
      expect(masked.endsWith(' :after')).toBe(true)
      // Nothing of the secret survives, in any of the encodings (the prefixed one holds other text).
      for (const [key, other] of Object.entries(encodings)) if (!key.includes('prefix')) expect(masked).not.toContain(other.slice(4, 12))
    })
  }

  it('masks each encoding given alone, a text no longer than what it holds (the masker skips shorter ones)', () => {
    for (const [name, encoded] of Object.entries(encodings)) {
      if (name.includes('prefix')) continue
      expect(masker.mask(encoded), name).toContain('[redacted MY_TOKEN]')
    }
    expect(masker.mask(secret)).toBe('[redacted MY_TOKEN]')
  })

  it('leaves ordinary text, hashes and hex dumps of other bytes as they are', () => {
    const text = [
      'commit 3f2a9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b',
      ' 68 65 6c 6c 6f 20 77 6f 72 6c 64 0a',
      'url: https://example.com/a%20b?q=%41%42',
      'escaped: \\u0041\\u0042 and a line\nbreak, spaced o u t',
    ].join('\n')
    expect(masker.mask(text)).toBe(text)
  })

  it('masks a short value given by a caller only as written, never inside hex or spaced text', () => {
    const short = createMasker({ env: {}, values: ['k1'] })
    expect(short.mask('k1 and k 1 and 6b 31')).toBe('*** and k 1 and 6b 31')
  })
})
