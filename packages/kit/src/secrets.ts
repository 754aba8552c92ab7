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
 * Text shaped like a secret whatever its value: `sk-` keys (the prefix and two characters stay, to tell
 * which key it was), the user info of a URL, and bearer tokens (8 characters or more with a digit, so
 * prose such as "a bearer token" stays readable).
 */
const SHAPES: readonly [pattern: RegExp, replacement: string | ((match: string, ...groups: string[]) => string)][] = [
  [/\b(sk-[A-Za-z0-9_-]{2})[A-Za-z0-9_\-*.]{6,}/g, '$1***'],
  [/\b([a-z][a-z0-9+.-]*:\/\/)([^/\s@]+)@/gi, (match, scheme, userInfo) => (isCredential(userInfo) ? `${scheme}***@` : match)],
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
 * in hex (either case), and in base64 (standard and URL-safe) at each of the three byte alignments it
 * can have inside a longer encoded text (`env | base64`), keeping only the characters that depend on
 * the secret's bytes alone.
 */
export function formsOf(value: string): string[] {
  const forms = new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)])
  const bytes = Buffer.from(value)
  forms.add(bytes.toString('hex'))
  forms.add(bytes.toString('hex').toUpperCase())
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64')
    // Character i holds bits [6i, 6i + 6): keep those entirely within the secret's bytes.
    const run = encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6))
    if (run.length < MIN_SECRET_CHARS) continue
    forms.add(run)
    forms.add(run.replace(/\+/g, '-').replace(/\//g, '_'))
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

export interface Masker {
  /** The known secrets, longest first. */
  readonly secrets: readonly Secret[]
  /** `text` with every form of every known secret, and every secret-shaped run if enabled, replaced. */
  mask(text: string): string
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

export function createMasker(options: MaskerOptions = {}): Masker {
  const label = options.label ?? (() => '***')
  const shapes = options.shapes ?? true
  const values = [...(options.values ?? []), ...held.keys()]
  const known = [...secretsIn(options.env ?? process.env), ...values.filter(Boolean).map((value) => ({ value }))]
  // Longest first, so a secret that contains another is masked whole.
  const secrets = known.sort((a, b) => b.value.length - a.value.length)
  const byForm = new Map<string, Secret>()
  for (const secret of secrets) for (const form of formsOf(secret.value)) if (!byForm.has(form)) byForm.set(form, secret)
  const forms = [...byForm.keys()].sort((a, b) => b.length - a.length)
  const pattern = forms.length ? new RegExp(forms.map(escapeRegExp).join('|'), 'g') : undefined

  const maskShapes = (text: string) => (shapes ? SHAPES.reduce((out, [regex, replacement]) => out.replace(regex, replacement as string), text) : text)

  return {
    secrets,
    mask(text) {
      if (!pattern) return maskShapes(text)
      // One pass over the known values; shapes are looked for only between them, so a label is never masked again.
      let out = ''
      let last = 0
      for (const match of text.matchAll(pattern)) {
        out += maskShapes(text.slice(last, match.index)) + label(byForm.get(match[0])!)
        last = match.index! + match[0].length
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
