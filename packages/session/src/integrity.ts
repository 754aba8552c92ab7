import { createHash, createHmac, type Hash, type Hmac, randomBytes } from 'node:crypto'
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
 *
 * A log of version 2 (its header says so) has one mac per batch instead: a batch is a run of lines the
 * writer wrote together, its first line says how many (`"batch":n`, absent for one) and carries the mac,
 * over the previous batch's mac and the exact text of every line of the batch (the first without its
 * mac) joined by newlines. A one-line batch is signed exactly like a line of version 1.
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

  /** An HMAC under way over `previous` and a newline: a batch's lines are fed to it with newlines between. */
  begin(previous: string): Hmac {
    return createHmac('sha256', this.key).update(previous).update('\n')
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

/** What a `BatchSigner` tells its session as it signs. */
export interface BatchHooks {
  onHead?(seq: number, offset: number, mac: string): void
  onSigned?(bytes: number): void
}

/**
 * Signs what a writer takes from its queue, one mac per batch (log version 2): the lines of one take are
 * one batch, cut before each line marked as a head (a checkpoint, so that its index entry points at the
 * start of a batch and reading can begin there). Lines are queued unsigned and signed when taken, so a
 * retry writes the same signed bytes again and later lines chain after them.
 */
export class BatchSigner {
  private heads = new Set<number>()
  /** The first line of the last batch signed (it carries the mac the chain is at), for the seal. */
  lastHead?: string

  /**
   * `last`: the mac the next batch chains from. `onHead`: a marked line was signed at the start of a
   * batch at byte `offset` of the log, chaining from `mac`. `onSigned`: a batch was signed, which made
   * the log `bytes` longer than its lines unsigned (the mac and the count on its first line).
   */
  constructor(private signer: Signer, public last: string, private hooks: BatchHooks = {}) {}

  /** Line `seq` (queued, not yet taken) starts a batch of its own. */
  markHead(seq: number) {
    this.heads.add(seq)
  }

  /**
   * Signs lines `firstSeq`... taken together (all with their newline, or all without, kept as they came);
   * the first is at byte `offset` of the log. Returns the signed lines.
   */
  sign(lines: string[], firstSeq: number, offset: number): string[] {
    const out: string[] = []
    let at = offset
    for (let start = 0, end = 1; end <= lines.length; end++) {
      if (end < lines.length && !this.heads.has(firstSeq + end)) continue
      if (this.heads.delete(firstSeq + start)) this.hooks.onHead?.(firstSeq + start, at, this.last)
      const head = this.signBatch(lines, start, end, out)
      // What signing added is ASCII: characters are bytes.
      this.hooks.onSigned?.(head.length - lines[start].length)
      // Offsets are only needed for a head still to come (rare: checkpoints). In the log every line ends in a
      // newline, also when it came without (a database row).
      if (this.heads.size) {
        const newline = lines[start].endsWith('\n') ? 0 : 1
        for (let i = start; i < end; i++) at += Buffer.byteLength(i === start ? head : lines[i]) + newline
      }
      start = end
    }
    return out
  }

  private signBatch(lines: string[], start: number, end: number, out: string[]): string {
    const newline = lines[start].endsWith('\n') ? '\n' : ''
    const strip = (line: string) => (newline ? line.slice(0, -1) : line)
    let first = strip(lines[start])
    if (end - start > 1) first = `${first.slice(0, -1)},"batch":${end - start}}`
    const hmac = this.signer.begin(this.last).update(first)
    for (let i = start + 1; i < end; i++) hmac.update('\n').update(strip(lines[i]))
    this.last = hmac.digest('hex')
    const head = `${first.slice(0, -1)},"mac":"${this.last}"}${newline}`
    out.push(head)
    for (let i = start + 1; i < end; i++) out.push(lines[i])
    this.lastHead = head
    return head
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

/**
 * A closed segment of a log kept as several files (the JSONL store's `<id>.jsonl.<n>`): its number, the
 * logical byte where it starts, its length, the seq of its last line and the mac its last line or batch
 * carries (its seal: where the chain stands at its end).
 */
export interface SegmentEntry {
  n: number
  start: number
  length: number
  lastSeq: number
  mac: string
}

/** The body a segment index's signature covers: every entry, bound to the session id. */
function segmentBody(id: string, segments: readonly SegmentEntry[]): string {
  return `segments\n${id}\n${segments.map((s) => `${s.n} ${s.start} ${s.length} ${s.lastSeq} ${s.mac}`).join('\n')}`
}

/** The signed text of the segment index of session `id`, as its store keeps it. */
export function signSegmentIndex(signer: Signer, id: string, segments: readonly SegmentEntry[]): string {
  const plain = segments.map(({ n, start, length, lastSeq, mac }) => ({ n, start, length, lastSeq, mac }))
  return `${JSON.stringify({ segments: plain, sig: signer.mac('', segmentBody(id, plain)) })}\n`
}

/**
 * The entries of a segment index as written, without checking its signature: what a store needs to finish
 * a rollover a crash interrupted (the service verifies the index before trusting it). Undefined: not one.
 */
export function parseSegmentIndex(text: string): SegmentEntry[] | undefined {
  try {
    const segments = JSON.parse(text)?.segments
    if (!Array.isArray(segments)) return
    const valid = segments.every((s) => s && [s.n, s.start, s.length, s.lastSeq].every((n) => Number.isSafeInteger(n) && n >= 0) && typeof s.mac === 'string')
    return valid ? segments.map(({ n, start, length, lastSeq, mac }) => ({ n, start, length, lastSeq, mac })) : undefined
  } catch {
    return undefined
  }
}

/** A segment index read back; undefined when it is not one this key made for this session. */
export function openSegmentIndex(signer: Signer, id: string, text: string): SegmentEntry[] | undefined {
  const segments = parseSegmentIndex(text)
  if (!segments) return
  try {
    return JSON.parse(text).sig === signer.mac('', segmentBody(id, segments)) ? segments : undefined
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
  return sealCheckOf(signer, id, await store.readSeal?.(id))
}

/** What the seal text a store holds for a log (`readSeal`) says: undefined when it has none. */
export function sealCheckOf(signer: Signer, id: string, text: string | undefined): SealCheck {
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
  /** One mac per batch (the header says version 2): a line with a mac may start a batch of several. */
  batched = false
  /** The batch being read: its first line, its mac, the lines still to come, the HMAC over those read. */
  private batch?: { first: number; mac: string; left: number; hmac: Hmac }
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

  /**
   * After the header of a fork that starts at its parent's checkpoint `seq` (`parent.from`): the next line
   * holds that seq, and the count goes on from there, so lines are counted as the seqs they hold.
   */
  jumpTo(seq: number) {
    this.count = seq
  }

  /** Every line must be signed, for the reason given (`its header says ...`). */
  requireSigned(why: string) {
    this.required ??= why
  }

  add(line: string, size = 1) {
    const { body, mac } = splitMac(line)
    this.check(line, body, mac, size)
  }

  /** Whether a batch was begun and not all of its lines were read yet: they are not verified. */
  get open(): boolean {
    return this.batch !== undefined
  }

  /**
   * `add` for a line already split by `splitMac`. `size`: the number of lines of the batch this line
   * starts, as it says (`"batch":n`), in a batched log; every other line is a batch of one.
   */
  check(line: string, body: string, mac: string | undefined, size = 1) {
    const signer = this.signer
    if (!signer || this.integrity.state === 'tampered') return
    const batch = this.batch
    if (batch) {
      // A line inside a batch: its whole text is signed by the batch's first line.
      this.count++
      batch.hmac.update('\n').update(line)
      if (--batch.left === 0) this.closeBatch()
      return
    }
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
    if (this.batched && size > 1) {
      this.batch = { first: number, mac, left: size - 1, hmac: signer.begin(this.last).update(body) }
      return
    }
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
    if (this.integrity.state === 'tampered') return
    // Inside a batch, none of its lines verified: trust ends where it starts.
    const first = this.batch?.first
    this.batch = undefined
    if (first === undefined) this.tamper(line, reason)
    else this.tamperBatch(first, line - 1, `are cut short at line ${line}, which ${reason}`)
  }

  /** All lines of the batch were read: its mac must match, and a seal that names one of them its last. */
  private closeBatch() {
    const { first, mac, hmac } = this.batch!
    this.batch = undefined
    const last = this.count
    if (hmac.digest('hex') !== mac) return this.tamperBatch(first, last, 'do not match their signature: a line of them was edited, moved, inserted or removed, or written by someone without the key')
    const seal = this.sealCheck.seal
    if (seal && seal.seq >= first - 1 && seal.seq < last - 1) return this.tamperBatch(first, last, `hold seq ${seal.seq}, where the seal of the log says a batch ended: the log was replaced`)
    if (seal && seal.seq === last - 1 && seal.mac !== mac) return this.tamperBatch(first, last, 'are not the batch the seal of the log says was written there: the log was replaced')
    this.signed = true
    this.last = mac
    this.integrity = { state: 'signed', lines: last - this.prefixLines, unsignedPrefix: this.prefixLines }
  }

  /**
   * After the last line: holds the log against its seal. `sealedHeader`: the header says the store
   * keeps a seal for it (every session created since seals exist), so a missing seal is a finding.
   */
  finish(sealedHeader: boolean) {
    if (!this.signer || this.integrity.state === 'tampered') return
    // A batch begun and not ended is a torn write: its lines are not read, and the log ends before it.
    const lastSeq = this.count - 1 - (this.batch ? this.count - this.batch.first + 1 : 0)
    this.batch = undefined
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

  /** Tampering found in a batch: located to the batch, whose lines are verified together. */
  private tamperBatch(first: number, last: number, reason: string) {
    this.integrity = { state: 'tampered', line: first, reason: `${this.file}:${first}: lines ${first}-${last} (one batch) ${reason}` }
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
