import { createHash, createHmac, type Hash, randomBytes } from 'node:crypto'
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { SessionStore } from './store.ts'
import type { Integrity } from './types.ts'

/**
 * Tamper evidence for session logs. Every line ends with `"mac":"<hex>"`, an HMAC-SHA256 (key kept
 * outside every workspace) over the previous line's mac and this line without its mac, starting from
 * a seed bound to the session id. Editing, reordering, dropping or inserting a line, or moving lines
 * between sessions, breaks the chain at the first changed line; appending needs the key.
 */
export class Signer {
  constructor(private key: Buffer) {}

  /**
   * A name of the key that can be shown and stored anywhere: the HMAC of a fixed label under it, cut to 16
   * hex digits. Two processes with the same id sign alike; the id tells nothing of the key.
   */
  get keyId(): string {
    return this.mac('', 'goalkeeper-key-id-v1').slice(0, 16)
  }

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

  /**
   * The seal of a log: the last durable record's seq and mac, signed and bound to the session id, kept
   * by the store apart from the log (a file beside it, a column of the session row), so that cutting
   * whole lines off the end of the log shows. Padded to a fixed width: it is overwritten in place.
   */
  seal(id: string, seq: number, mac: string): string {
    return JSON.stringify({ seq, mac, sig: this.mac(mac, `seal\n${id}\n${seq}`) }).padEnd(SEAL_WIDTH - 1) + '\n'
  }

  /** Parses a seal; undefined when it is not one this key made for this session. */
  openSeal(id: string, text: string): Seal | undefined {
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
 * Where a log's last checkpoint starts: its seq, the byte offset of its line, the mac the line chains from
 * and the lines of the unsigned prefix before signing began (0 for any log created signed).
 */
export interface CheckpointEntry {
  seq: number
  offset: number
  mac: string
  prefix: number
}

/** The signed text of a checkpoint index entry of session `id`, as its store keeps it. */
export function signCheckpointEntry(signer: Signer, id: string, entry: CheckpointEntry): string {
  const { seq, offset, mac, prefix } = entry
  return `${JSON.stringify({ seq, offset, mac, prefix, sig: signer.mac(mac, `checkpoint\n${id}\n${seq}\n${offset}\n${prefix}`) })}\n`
}

/** A checkpoint index entry read back; undefined when it is not one this key made for this session. */
export function openCheckpointEntry(signer: Signer, id: string, text: string): CheckpointEntry | undefined {
  try {
    const value = JSON.parse(text)
    const { seq, offset, mac, prefix, sig } = value ?? {}
    if (![seq, offset, prefix].every((n) => Number.isSafeInteger(n) && n >= 0) || typeof mac !== 'string' || typeof sig !== 'string') return
    return sig === signer.mac(mac, `checkpoint\n${id}\n${seq}\n${offset}\n${prefix}`) ? { seq, offset, mac, prefix } : undefined
  } catch {
    return undefined
  }
}

/** Bytes of a seal as stored: always the same, so that a seal is rewritten in place by one write. */
export const SEAL_WIDTH = 256

/** What a log's seal says: the record `seq` was durable with this `mac`. */
export interface Seal {
  seq: number
  mac: string
}

/** What `store` holds as the seal of log `id`, checked with `signer`. */
export async function readSealCheck(store: Pick<SessionStore, 'readSeal'>, signer: Signer, id: string): Promise<SealCheck> {
  const text = await store.readSeal?.(id)
  if (text === undefined) return {}
  const seal = signer.openSeal(id, text)
  return seal ? { seal } : { invalid: true }
}

/** What the store holds for a log, checked while it streams: its seal, or something that is not one. */
export interface SealCheck {
  seal?: Seal
  /** The store holds something that is not a seal of this session (edited, moved from another, another key). */
  invalid?: boolean
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
 * either. The first line that breaks the chain is where the log stops being trusted. Whether a log is
 * signed is decided by what its header and its store say, never by its lines alone: a log whose header
 * says it is sealed, or whose store holds a seal for it, is tampered at its first unsigned line, so
 * removing every mac does not pass a log off as one from before signing. At the end, the log is held
 * against its seal: shorter than the seal says is a cut tail. Holds no line: replay and the streaming
 * listing both use it.
 */
export class ChainCheck {
  last: string
  integrity: Integrity = { state: 'unsigned' }
  /** Whether the header line carries a mac: the log is signed, and a break in its seqs is tampering. */
  headerSigned = false
  /** The id of the key the header says signed the log (`SessionHeaderData.keyId`), when it names one. */
  headerKeyId?: string
  private signed = false
  private required?: string
  private count = 0
  private prefixLines = 0
  private prefix?: RunningMac

  constructor(private file: string, id: string, private signer?: Signer, private sealCheck: SealCheck = {}) {
    this.last = signer?.seed(id) ?? ''
  }

  /**
   * Continues the chain at a checkpoint instead of the header: the lines before it (`seq` of them, the
   * first `prefix` unsigned) verified when they were written, and `mac` is the one the next line chains from.
   */
  resumeAt(seq: number, mac: string, prefix: number) {
    this.count = seq
    this.prefixLines = prefix
    this.last = mac
    this.signed = true
    this.headerSigned = true
  }

  /** Every line must be signed, for the reason given (`its header says ...`). */
  requireSigned(why: string) {
    this.required ??= why
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
    if (number === 1 && mac) this.headerSigned = true
    const sealed = this.sealCheck.seal?.seq === number - 1 ? this.sealCheck.seal : undefined
    if (!mac) {
      if (this.signed) return this.tamper(number, 'is not signed, yet lines before it are')
      if (this.required) return this.tamper(number, `is not signed, yet ${this.required}`)
      if (sealed) return this.tamper(number, 'is not signed, yet the seal of the log says it was')
      this.prefix ??= signer.running(this.last).update('unsigned-prefix\n')
      this.prefix.update(this.prefixLines++ ? `\n${line}` : line)
      return
    }
    this.last = this.next()
    // A header that fails under this key and names another is a fleet with two keys, not an edit.
    if (number === 1 && this.headerKeyId && this.headerKeyId !== signer.keyId && signer.mac(this.last, body) !== mac) {
      this.integrity = { state: 'tampered', line: 1, otherKey: this.headerKeyId, reason: `${this.file}:1: line is signed with another key: key id ${this.headerKeyId}, not this key's ${signer.keyId}` }
      return
    }
    if (signer.mac(this.last, body) !== mac) return this.tamper(number, 'does not match its signature: it was edited, moved, inserted or written by someone without the key')
    if (sealed && sealed.mac !== mac) return this.tamper(number, 'is not the line the seal of the log says was written there: the log was replaced')
    this.signed = true
    this.last = mac
    this.integrity = { state: 'signed', lines: number - this.prefixLines, unsignedPrefix: this.prefixLines }
  }

  /** A line whose seq does not follow in a signed log: lines were removed, reordered or inserted. */
  breakAt(line: number, reason: string) {
    if (this.integrity.state !== 'tampered') this.tamper(line, reason)
  }

  /**
   * After the last line: holds the log against its seal. `sealedHeader`: the header says the store
   * keeps a seal for it (every session created since seals exist), so a missing seal is a finding.
   */
  finish(sealedHeader: boolean) {
    if (!this.signer || this.integrity.state === 'tampered') return
    const lastSeq = this.count - 1
    const { seal, invalid } = this.sealCheck
    if ((seal || invalid) && !this.signed) return this.tamper(1, 'is not signed, yet the store holds a seal for the log: its signatures were removed')
    const cut = (sealedSeq: number | undefined, why: string) => {
      this.integrity = { state: 'truncated', lastSeq, ...(sealedSeq !== undefined && { sealedSeq }), reason: `${this.file}: ${why}` }
    }
    if (invalid) return cut(undefined, `its seal does not verify (edited, or taken from another session), so whether lines were cut off its end after seq ${lastSeq} cannot be told`)
    if (seal && seal.seq > lastSeq) return cut(seal.seq, `the log ends at seq ${lastSeq}, but its seal says seq ${seal.seq} was written: lines were cut off its end`)
    if (!seal && sealedHeader) return cut(undefined, `its seal is missing (removed by someone else), so whether lines were cut off its end after seq ${lastSeq} cannot be told`)
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
    return await readKey(file)
  } catch (error) {
    // A setting the person must fix: named by its field, never a bare errno.
    if ((error as { code?: string }).code === 'SESSION_KEY_INVALID') throw error
    throw Object.assign(new Error(`keyFile of the session plugin: ${file} cannot be read or made: ${(error as Error).message}`, { cause: error }), { code: 'SESSION_KEY_INVALID' })
  }
}

async function readKey(file: string): Promise<Buffer> {
  const info = await stat(file)
  if (info.isDirectory()) throw Object.assign(new Error(`keyFile of the session plugin: ${file} is a directory, not a key file`), { code: 'SESSION_KEY_INVALID' })
  // Anyone else who can read the key can sign records: tighten rights that a copy or umask loosened.
  if (process.platform !== 'win32' && (info.mode & 0o077) !== 0) await chmod(file, 0o600)
  const text = (await readFile(file, 'utf8')).trim()
  if (!/^[0-9a-f]{64}$/.test(text)) throw Object.assign(new Error(`keyFile of the session plugin: ${file} is not a goalkeeper session key (64 hex digits; make one with: openssl rand -hex 32)`), { code: 'SESSION_KEY_INVALID' })
  return Buffer.from(text, 'hex')
}
