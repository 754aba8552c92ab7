// The one rule for what counts as a secret and how it is masked, used by every package that writes text
// somewhere a secret must not reach: the host's terminal and log lines, model-provider errors, and what the
// workspace tools return to the model (and so to the session file).

export type Env = Readonly<Record<string, string | undefined>>

/**
 * Names of credential variables: a `_`-delimited word such as KEY or TOKEN (`GITHUB_TOKEN`,
 * `DEEPSEEK_API_KEY`), PASSWORD and the like anywhere (`PGPASSWORD`, `DATABASE_PASSWORD`), or a `_PWD`
 * suffix (`MYSQL_PWD`; `PWD` itself is the working directory).
 */
export const SECRET_NAME = /(^|_)(API_?KEY|KEY|TOKEN|DSN|COOKIE|CREDENTIALS?)(_|$)|PASSWORD|PASSWD|PASSPHRASE|SECRET|_PWD$/i
/** A URL carrying user info (`postgres://user:pass@host`, `https://token@host`, `postgres://app@host`). */
const USER_INFO_URL = /^[a-z][a-z0-9+.-]*:\/\/([^/\s@]+)@/i
/** Shorter values from the environment are not masked: they would match ordinary text (`1`, `true`, `admin`). */
export const MIN_SECRET_CHARS = 8

/**
 * Whether the user info of a URL holds a credential: a password (`user:pass`), or a lone name shaped
 * like a token (8 characters or more with a digit, `https://ghp_1a2b…@host`). A plain user name
 * (`postgres://gk@db`, the password coming from elsewhere) is not one, so such a URL stays readable.
 */
function isCredential(userInfo: string): boolean {
  return userInfo.includes(':') || (userInfo.length >= MIN_SECRET_CHARS && /\d/.test(userInfo))
}

/** The user info of a URL value when it holds a credential. */
function credentialOf(value: string): string | undefined {
  const userInfo = USER_INFO_URL.exec(value)?.[1]
  return userInfo && isCredential(userInfo) ? userInfo : undefined
}

/**
 * A URL's user info as shown: a password becomes `***` behind its user name (`postgres://app:***@db`), unless
 * the name itself looks like a token (`https://ghp_1a2b…:x-oauth-basic@host`), then the whole of it does; a
 * plain user name alone is no credential and stays.
 */
function maskUserInfo(match: string, scheme: string, userInfo: string): string {
  if (!isCredential(userInfo)) return match
  const colon = userInfo.indexOf(':')
  return colon >= 0 && !isCredential(userInfo.slice(0, colon)) ? `${scheme}${userInfo.slice(0, colon)}:***@` : `${scheme}***@`
}

/**
 * Text shaped like a secret whatever its value: `sk-` keys (the prefix and two characters stay, to tell
 * which key it was), the user info of a URL, and bearer tokens (8 characters or more with a digit, so
 * prose such as "a bearer token" stays readable).
 */
const SHAPES: readonly [pattern: RegExp, replacement: string | ((match: string, ...groups: string[]) => string)][] = [
  [/\b(sk-[A-Za-z0-9_-]{2})[A-Za-z0-9_\-*.]{6,}/g, '$1***'],
  [/\b([a-z][a-z0-9+.-]*:\/\/)([^/\s@]+)@/gi, maskUserInfo],
  [/(bearer\s+)(?=[^\s"',}]*\d)[^\s"',}]{8,}/gi, '$1***'],
]

/** A value to hide; `name` is the environment variable it came from, if any. */
export interface Secret {
  readonly value: string
  readonly name?: string
}

/** Whether a variable holds a credential: by its name, or by a value that is a URL with user info. */
export function isSecretVariable(name: string, value: string | undefined): boolean {
  return SECRET_NAME.test(name) || (!!value && credentialOf(value) !== undefined)
}

/**
 * The values worth masking in `env`: the value of every secret variable, and the user info and password
 * of a credential URL (so `postgres://app:pw@db` hides `pw` wherever it shows up alone), when at least
 * MIN_SECRET_CHARS long.
 */
export function secretsIn(env: Env): Secret[] {
  const secrets: Secret[] = []
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue
    const userInfo = credentialOf(value)
    if (!userInfo && !SECRET_NAME.test(name)) continue
    const candidates = new Set([value, userInfo, userInfo?.slice(userInfo.indexOf(':') + 1)])
    for (const candidate of candidates) {
      if (candidate && candidate.length >= MIN_SECRET_CHARS) secrets.push({ value: candidate, name })
    }
  }
  return secrets
}

/**
 * The forms in which a secret can appear in text: as written, escaped inside JSON output, URL-encoded,
 * in hex (either case), in base64 (standard and URL-safe) and base32 at each byte alignment it can have
 * inside a longer encoded text (`env | base64`), keeping only the characters that depend on the secret's
 * bytes alone, and reversed.
 */
export function formsOf(value: string): string[] {
  const forms = new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)])
  const bytes = Buffer.from(value)
  forms.add(bytes.toString('hex'))
  forms.add(bytes.toString('hex').toUpperCase())
  for (const run of alignedRuns(bytes, 3, 6, (padded) => padded.toString('base64'))) {
    forms.add(run)
    forms.add(run.replace(/\+/g, '-').replace(/\//g, '_'))
  }
  for (const run of alignedRuns(bytes, 5, 5, base32)) {
    forms.add(run)
    forms.add(run.toLowerCase())
  }
  if (value.length >= MIN_SECRET_CHARS) {
    const reversed = [...value].reverse().join('')
    forms.add(reversed)
    forms.add(JSON.stringify(reversed).slice(1, -1))
  }
  return [...forms]
}

/** Secrets this process holds outside its environment (the session signing key), with how many holders each has. */
const held = new Map<string, number>()
let heldGeneration = 0

/**
 * Makes `value` a known secret of every masker made from now on (and of every `liveMasker`), until the
 * returned function is called: a secret read from a file is in no environment variable, yet must never
 * reach a model, a session or a log.
 */
export function holdSecret(value: string): () => void {
  if (!value) return () => {}
  held.set(value, (held.get(value) ?? 0) + 1)
  heldGeneration++
  let released = false
  return () => {
    if (released) return
    released = true
    const count = held.get(value)! - 1
    if (count) held.set(value, count)
    else held.delete(value)
    heldGeneration++
  }
}

/**
 * The characters of `encode(prefix + bytes)` that depend on `bytes` alone, for every prefix length below
 * `period` (the bytes of one encoding group): character i holds bits [bits * i, bits * (i + 1)).
 */
function alignedRuns(bytes: Buffer, period: number, bits: number, encode: (padded: Buffer) => string): string[] {
  const runs: string[] = []
  for (let offset = 0; offset < period; offset++) {
    const encoded = encode(Buffer.concat([Buffer.alloc(offset), bytes]))
    const run = encoded.slice(Math.ceil((8 * offset) / bits), Math.floor((8 * (offset + bytes.length)) / bits))
    if (run.length >= MIN_SECRET_CHARS) runs.push(run)
  }
  return runs
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

/** RFC 4648 base32, unpadded (Node has no built-in). */
function base32(bytes: Buffer): string {
  let out = ''
  let buffer = 0
  let held = 0
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff
    held += 8
    while (held >= 5) {
      held -= 5
      out += BASE32[(buffer >> held) & 31]
    }
  }
  if (held > 0) out += BASE32[(buffer << (5 - held)) & 31]
  return out
}

export interface MaskerOptions {
  /** Where secret variables are read from (default `process.env`, read once when the masker is made). */
  env?: Env
  /** Other known secrets, such as a configured API key; masked whatever their length. */
  values?: readonly string[]
  /**
   * Also mask text shaped like a secret whose value is not known (default true). Off where text must
   * round-trip, such as file contents a model reads and edits.
   */
  shapes?: boolean
  /** What a known secret becomes (default `***`). */
  label?: (secret: Secret) => string
}

/**
 * The label every place that shows text to a person or keeps it uses: a known secret becomes
 * `[redacted NAME]` (which variable it was, never its value), an unnamed one `***`.
 */
export const redactedLabel = ({ name }: Secret): string => (name ? `[redacted ${name}]` : '***')

export interface Masker {
  /** The known secrets, longest first. */
  readonly secrets: readonly Secret[]
  /** `text` with every form of every known secret, and every secret-shaped run if enabled, replaced. */
  mask(text: string): string
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * A normalised copy of a text that the forms are looked for in, with, for each of its characters, the
 * range of the original text it came from (`[from[i], to[i])`; absent: the same character).
 */
interface View {
  text: string
  from?: Int32Array
  to?: Int32Array
}

/** Whitespace (listed: `\s` is several times slower on long text) and the escapes JSON output writes for it. */
const SPACES = /[ \t\n\r\f\v\u00a0\u2028\u2029]+/g
const ESCAPED_SPACES = /\\+[nrt]/gi
const ESCAPES = /%[0-9a-fA-F]{2}|\\[uUxX][0-9a-fA-F]{2}/
const NOT_HEX = /0x(?=[0-9a-f])|[^0-9a-f]+/gi
/** Eight hex bytes in a row with or without separators: the only text whose hex digits are worth gathering. */
const HEX_BYTES = /(?:(?:0x|\\+x|%)?[0-9a-fA-F]{2}(?:\\+[nrt]|[^0-9a-zA-Z\\]){0,4}){8}/
const isSpace = (code: number) => code === 32 || (code >= 9 && code <= 13) || code === 0xa0 || code === 0x2028 || code === 0x2029
const isHex = (code: number) => (code >= 48 && code <= 57) || ((code | 0x20) >= 97 && (code | 0x20) <= 102)

/** The text without whitespace and its escapes, cheaply, to learn whether the mapped view is worth building. */
const squeeze = (text: string) => {
  const out = text.replace(SPACES, '')
  return out.includes('\\') ? out.replace(ESCAPED_SPACES, '') : out
}

const hexDigits = (text: string) => text.replace(NOT_HEX, '').toLowerCase()

/** How many hex digits the text has: more than its hex view holds, so fewer than a form's length rule it out. */
const countHex = (text: string) => {
  let count = 0
  for (let i = 0; i < text.length; i++) if (isHex(text.charCodeAt(i))) count++
  return count
}

/**
 * The text without whitespace (and `\n`, `\r`, `\t` escapes), so a secret split over lines, over two
 * `echo`s or written one character per space is one run again. With `decode`, `%xx`, `\xXX` and
 * `\uXXXX` escapes (any number of backslashes: JSON output doubles them) become the characters they
 * stand for, `%xx` as the byte's latin1 character.
 */
function compactView(text: string, decode: boolean): View {
  const from = new Int32Array(text.length)
  const to = new Int32Array(text.length)
  const chars: string[] = []
  const put = (char: string, start: number, end: number) => {
    from[chars.length] = start
    to[chars.length] = end
    chars.push(char)
  }
  const hexAt = (at: number, width: number) => {
    if (at + width > text.length) return -1
    for (let k = at; k < at + width; k++) if (!isHex(text.charCodeAt(k))) return -1
    return parseInt(text.slice(at, at + width), 16)
  }
  let i = 0
  while (i < text.length) {
    const code = text.charCodeAt(i)
    if (isSpace(code)) {
      i++
      continue
    }
    if (code === 92 /* \ */) {
      let j = i
      while (text.charCodeAt(j) === 92) j++
      const letter = (text.charCodeAt(j) | 0x20)
      // Any number of backslashes: output that is JSON of JSON doubles them.
      if (letter === 110 || letter === 114 || letter === 116 /* n r t */) {
        i = j + 1
        continue
      }
      const width = !decode ? 0 : letter === 117 /* u */ ? 4 : letter === 120 /* x */ ? 2 : 0
      const value = width ? hexAt(j + 1, width) : -1
      if (value >= 0) {
        put(String.fromCharCode(value), i, j + 1 + width)
        i = j + 1 + width
        continue
      }
    }
    if (decode && code === 37 /* % */) {
      const value = hexAt(i + 1, 2)
      if (value >= 0) {
        put(String.fromCharCode(value), i, i + 3)
        i += 3
        continue
      }
    }
    put(text[i]!, i, i + 1)
    i++
  }
  return { text: chars.join(''), from: from.subarray(0, chars.length), to: to.subarray(0, chars.length) }
}

/**
 * Only the hex digits of the text, lower-cased (and without `0x` prefixes), so a secret dumped in hex
 * with separators between its bytes (`od -An -tx1`, `68:75`, `\x68\x75`, `0x68, 0x75`, per-byte `%68`)
 * is one hex run.
 */
function hexView(text: string): View {
  const from = new Int32Array(text.length)
  const chars: string[] = []
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (!isHex(code)) continue
    if (code === 48 && (text.charCodeAt(i + 1) | 0x20) === 120 && isHex(text.charCodeAt(i + 2))) continue
    from[chars.length] = i
    chars.push(String.fromCharCode(code | 0x20))
  }
  const at = from.subarray(0, chars.length)
  return { text: chars.join(''), from: at, to: at.map((index) => index + 1) }
}

/** The forms looked for in one kind of view, as one alternation, longest first, each naming its secret. */
class FormSet {
  readonly pattern: RegExp | undefined
  /** Length of the shortest form (Infinity when there is none): a shorter view cannot hold one. */
  readonly minLength: number
  /** The same alternation without the global flag, for a yes/no look at a cheap unmapped view. */
  private readonly probe: RegExp | undefined
  private readonly owners = new Map<string, Secret>()

  constructor(entries: Iterable<[form: string, secret: Secret]>, minLength = 1) {
    for (const [form, secret] of entries) if (form.length >= minLength && !this.owners.has(form)) this.owners.set(form, secret)
    const forms = [...this.owners.keys()].sort((a, b) => b.length - a.length)
    this.minLength = forms.length ? forms[forms.length - 1]!.length : Infinity
    const source = forms.map(escapeRegExp).join('|')
    this.pattern = forms.length ? new RegExp(source, 'g') : undefined
    this.probe = forms.length ? new RegExp(source) : undefined
  }

  /** Whether any form occurs in `text`. */
  occursIn(text: string): boolean {
    return !!this.probe?.test(text)
  }

  /** Adds `[start, end, secret]` in the original text's indices for every form found in `view`. */
  find(view: View, found: Range[]): void {
    if (!this.pattern) return
    for (const match of view.text.matchAll(this.pattern)) {
      const start = match.index!
      const end = start + match[0].length
      const owner = this.owners.get(match[0])!
      found.push(view.from && view.to ? [view.from[start]!, view.to[end - 1]!, owner] : [start, end, owner])
    }
  }
}

type Range = [start: number, end: number, secret: Secret]

const compact = (form: string) => form.replace(/\s+|\\+[nrt]/g, '')

/** What a set of secrets compiles to; kept for the last few sets, since hosts make a masker per line written. */
interface Compiled {
  secrets: Secret[]
  /** The shortest form of every view: no view is longer than its text, so a shorter text holds none. */
  minLength: number
  exact: FormSet
  spaced: FormSet
  decoded: FormSet
  hex: FormSet
}

const compiled = new Map<string, Compiled>()

function compile(secrets: Secret[]): Compiled {
  const key = JSON.stringify(secrets.map((s) => [s.value, s.name ?? null]))
  const cached = compiled.get(key)
  if (cached) return cached
  const exact: [string, Secret][] = []
  const spaced: [string, Secret][] = []
  const decoded: [string, Secret][] = []
  const hex: [string, Secret][] = []
  for (const secret of secrets) {
    const forms = formsOf(secret.value)
    if (secret.value.length < MIN_SECRET_CHARS) {
      // A short value given by a caller is looked for only as written: spaced out or as a run of hex
      // digits it would turn up in ordinary text.
      for (const form of forms) exact.push([form, secret])
      continue
    }
    for (const form of forms) {
      exact.push([form, secret])
      spaced.push([compact(form), secret])
      decoded.push([compact(form), secret])
    }
    decoded.push([compact(Buffer.from(secret.value).toString('latin1')), secret])
    hex.push([Buffer.from(secret.value).toString('hex'), secret])
  }
  const sets = { exact: new FormSet(exact), spaced: new FormSet(spaced, MIN_SECRET_CHARS), decoded: new FormSet(decoded, MIN_SECRET_CHARS), hex: new FormSet(hex) }
  const minLength = Math.min(...Object.values(sets).map((set) => set.minLength))
  const result: Compiled = { secrets, minLength, ...sets }
  if (compiled.size >= 16) compiled.delete(compiled.keys().next().value!)
  compiled.set(key, result)
  return result
}

export function createMasker(options: MaskerOptions = {}): Masker {
  const label = options.label ?? (() => '***')
  const shapes = options.shapes ?? true
  const values = [...(options.values ?? []), ...held.keys()]
  const known = [...secretsIn(options.env ?? process.env), ...values.filter(Boolean).map((value) => ({ value }))]
  // Longest first, so a secret that contains another is masked whole.
  const secrets = known.sort((a, b) => b.value.length - a.value.length)
  const forms = secrets.length ? compile(secrets) : undefined

  const maskShapes = (text: string) => (shapes ? SHAPES.reduce((out, [regex, replacement]) => out.replace(regex, replacement as string), text) : text)

  return {
    secrets,
    mask(text) {
      // Every view is the text with characters dropped or shortened (never lengthened), so a text shorter
      // than a view's shortest form cannot hold one: most strings of a record (keys, ids) are skipped so.
      if (!forms || text.length < forms.minLength) return maskShapes(text)
      // Each view is one linear pass; what any of them finds is mapped back to the original text, and
      // overlapping finds become one masked run.
      const found: Range[] = []
      // A yes/no look first: collecting matches costs several times more, and most texts have none.
      if (forms.exact.occursIn(text)) forms.exact.find({ text }, found)
      // The mapped views cost more than a native replace: they are built only for a text that has a hit.
      if (text.length >= forms.spaced.minLength && forms.spaced.occursIn(squeeze(text))) forms.spaced.find(compactView(text, false), found)
      if (text.length >= forms.decoded.minLength && ESCAPES.test(text)) forms.decoded.find(compactView(text, true), found)
      if (countHex(text) >= forms.hex.minLength && HEX_BYTES.test(text) && forms.hex.occursIn(hexDigits(text))) forms.hex.find(hexView(text), found)
      if (!found.length) return maskShapes(text)
      found.sort((a, b) => a[0] - b[0] || b[1] - a[1])
      // Shapes are looked for only between masked runs, so a label is never masked again.
      let out = ''
      let last = 0
      let i = 0
      while (i < found.length) {
        let [start, end, secret] = found[i]!
        for (i++; i < found.length && found[i]![0] < end; i++) end = Math.max(end, found[i]![1])
        if (start < last) start = last
        out += maskShapes(text.slice(last, start)) + label(secret)
        last = end
      }
      return out + maskShapes(text.slice(last))
    },
  }
}

/**
 * A masker that is made again whenever the held secrets change: for one made at start that must also
 * mask a secret loaded later (the session key is read on first use).
 */
export function liveMasker(options: MaskerOptions = {}): Masker {
  let madeAt = -1
  let masker: Masker | undefined
  const current = () => {
    if (madeAt !== heldGeneration) {
      masker = createMasker(options)
      madeAt = heldGeneration
    }
    return masker!
  }
  return {
    get secrets() {
      return current().secrets
    },
    mask: (text) => current().mask(text),
  }
}

/**
 * A copy of a JSON-like value with every string (object keys included) masked; values without a secret
 * are returned as they are, so masking what holds none copies nothing.
 */
export function maskDeep<T>(value: T, masker: Masker): T {
  // A cycle is left as it is (its strings were masked on the way in): the caller's serialiser reports it.
  const path = new Set<object>()
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') return masker.mask(item)
    if (item && typeof item === 'object' && path.has(item)) return item
    if (Array.isArray(item)) {
      path.add(item)
      const out = item.map(walk)
      path.delete(item)
      return out.some((entry, i) => entry !== item[i]) ? out : item
    }
    if (item && typeof item === 'object' && (Object.getPrototypeOf(item) === Object.prototype || Object.getPrototypeOf(item) === null)) {
      path.add(item)
      let changed = false
      const out: Record<string, unknown> = {}
      for (const [key, entry] of Object.entries(item)) {
        const k = masker.mask(key)
        const v = walk(entry)
        if (k !== key || v !== entry) changed = true
        out[k] = v
      }
      path.delete(item)
      return changed ? out : item
    }
    return item
  }
  return walk(value) as T
}
