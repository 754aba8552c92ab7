import { createHash, createHmac, type Hash, randomBytes } from 'node:crypto'
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { Integrity } from './types.ts'

/**
 * Tamper evidence for session logs. Every line ends with `"mac":"<hex>"`, an HMAC-SHA256 (key kept
 * outside every workspace) over the previous line's mac and this line without its mac, starting from
 * a seed bound to the session id. Editing, reordering, dropping or inserting a line, or moving lines
 * between sessions, breaks the chain at the first changed line; appending needs the key.
 */
export class Signer {
  constructor(private key: Buffer) {}

  seed(id: string): string {
    return this.mac('', `goalkeeper-session-v1\n${id}`)
  }

  /** The mac of a line body (the record JSON without its mac) following the mac `previous`. */
  mac(previous: string, body: string): string {
    return createHmac('sha256', this.key).update(previous).update('\n').update(body).digest('hex')
  }

  /**
   * `mac(previous, body)` for a body given piece by piece, readable at any point: the mac over an
   * unsigned prefix is computed while streaming a log, without holding the prefix.
   */
  running(previous: string): RunningMac {
    return new RunningMac(this.key, previous)
  }

  /** Appends the mac to an encoded record line (without newline); returns the signed line and its mac. */
  sign(previous: string, line: string): { line: string; mac: string } {
    const mac = this.mac(previous, line)
    return { line: `${line.slice(0, -1)},"mac":"${mac}"}`, mac }
  }

  /** The seal of a log: the last durable record and its mac, signed, so that cutting whole lines off the end shows. */
  seal(id: string, seq: number, mac: string): string {
    return JSON.stringify({ seq, mac, sig: this.mac(mac, `seal\n${id}\n${seq}`) })
  }

  /** Parses a seal; undefined when it is not one this key made for this session. */
  openSeal(id: string, text: string): { seq: number; mac: string } | undefined {
    try {
      const value = JSON.parse(text)
      if (!Number.isInteger(value?.seq) || typeof value.mac !== 'string' || typeof value.sig !== 'string') return
      return value.sig === this.mac(value.mac, `seal\n${id}\n${value.seq}`) ? { seq: value.seq, mac: value.mac } : undefined
    } catch {
      return undefined
    }
  }
}

/**
 * HMAC-SHA256 (RFC 2104) fed incrementally; `digest` may be read more than once (a hash copy), which
 * `createHmac` does not allow. Equals `Signer.mac(previous, <everything updated>)`.
 */
export class RunningMac {
  private inner: Hash
  private outerPad: Buffer

  constructor(key: Buffer, previous: string) {
    const block = Buffer.alloc(64)
    ;(key.length > 64 ? createHash('sha256').update(key).digest() : key).copy(block)
    this.inner = createHash('sha256').update(block.map((b) => b ^ 0x36)).update(previous).update('\n')
    this.outerPad = Buffer.from(block.map((b) => b ^ 0x5c))
  }

  update(text: string): this {
    this.inner.update(text)
    return this
  }

  digest(): string {
    return createHash('sha256').update(this.outerPad).update(this.inner.copy().digest()).digest('hex')
  }
}

/**
 * Follows the mac chain line by line. An unsigned prefix (a log from before signing) is accepted, and
 * the first signed line chains from a mac over that whole prefix, so the prefix cannot change later
 * either. The first line that breaks the chain is where the log stops being trusted. Holds no line:
 * replay and the streaming listing both use it.
 */
export class ChainCheck {
  last: string
  integrity: Integrity = { state: 'unsigned' }
  private signed = false
  private count = 0
  private prefixLines = 0
  private prefix?: RunningMac

  constructor(private file: string, id: string, private signer?: Signer) {
    this.last = signer?.seed(id) ?? ''
  }

  add(line: string) {
    const { body, mac } = splitMac(line)
    this.check(line, body, mac)
  }

  /** `add` for a line already split by `splitMac`. */
  check(line: string, body: string, mac: string | undefined) {
    const signer = this.signer
    if (!signer || this.integrity.state === 'tampered') return
    const number = ++this.count
    if (!mac) {
      if (this.signed) return this.tamper(number, 'is not signed, yet lines before it are')
      this.prefix ??= signer.running(this.last).update('unsigned-prefix\n')
      this.prefix.update(this.prefixLines++ ? `\n${line}` : line)
      return
    }
    this.last = this.next()
    if (signer.mac(this.last, body) !== mac) return this.tamper(number, 'does not match its signature: it was edited, moved, inserted or written by someone without the key')
    this.signed = true
    this.last = mac
    this.integrity = { state: 'signed', lines: number - this.prefixLines, unsignedPrefix: this.prefixLines }
  }

  /** The mac the next signed line chains from: after an unsigned prefix, a mac over all of it. */
  next(): string {
    if (this.signed || !this.prefix) return this.last
    return this.prefix.digest()
  }

  private tamper(line: number, reason: string) {
    this.integrity = { state: 'tampered', line, reason: `${this.file}:${line}: line ${reason}` }
  }
}

const MAC_PREFIX = ',"mac":"'
/** `,"mac":"` + 64 hex digits + `"}`: where the mac sits, always at the end of a signed line. */
const SUFFIX_LENGTH = MAC_PREFIX.length + 64 + 2
const HEX64 = /[0-9a-f]{64}/y

/** Splits a line into its body (what was signed) and its mac; no mac: an unsigned line. */
export function splitMac(text: string): { body: string; mac?: string } {
  // Checked in place at the end rather than searched for: replay splits every line of a log.
  const at = text.length - SUFFIX_LENGTH
  if (at < 0 || !text.endsWith('"}') || !text.startsWith(MAC_PREFIX, at)) return { body: text }
  HEX64.lastIndex = at + MAC_PREFIX.length
  if (!HEX64.test(text)) return { body: text }
  return { body: `${text.slice(0, at)}}`, mac: text.slice(at + MAC_PREFIX.length, text.length - 2) }
}

/** `$XDG_CONFIG_HOME` (absolute), else `~/.config`. */
export function configHome(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.XDG_CONFIG_HOME
  return configured && path.isAbsolute(configured) ? configured : path.join(os.homedir(), '.config')
}

export function defaultKeyFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(configHome(env), 'goalkeeper', 'session.key')
}

/**
 * The signing key: 32 random bytes (hex) in `file`, created with 0600 in a 0700 directory on first use.
 * Two processes creating it at once both end with the one that won the exclusive create.
 */
export async function loadKey(file: string): Promise<Buffer> {
  try {
    return await readKey(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
  try {
    await writeFile(file, `${randomBytes(32).toString('hex')}\n`, { flag: 'wx', mode: 0o600 })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  return readKey(file)
}

async function readKey(file: string): Promise<Buffer> {
  const info = await stat(file)
  // Anyone else who can read the key can sign records: tighten rights that a copy or umask loosened.
  if (process.platform !== 'win32' && (info.mode & 0o077) !== 0) await chmod(file, 0o600)
  const text = (await readFile(file, 'utf8')).trim()
  if (!/^[0-9a-f]{64}$/.test(text)) throw Object.assign(new Error(`${file} is not a goalkeeper session key (64 hex digits)`), { code: 'SESSION_KEY_INVALID' })
  return Buffer.from(text, 'hex')
}
