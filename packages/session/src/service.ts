import path from 'node:path'
import type { Context, Logger } from 'cordis'
import { describeError, dispatchIsolated, holdSecret } from '@goalkeeper/kit'
import { encodeRecord, HEADER, headerOf } from './codec.ts'
import { assertSessionId, newSessionId } from './ids.ts'
import { listSessions } from './list.ts'
import { recentSessions, type RecentSessions } from './recent.ts'
import { SummaryKeeper } from './summary-keeper.ts'
import { SUMMARY_PART, summaryPart } from './summary.ts'
import { isRecordOf, type SessionHeaderData, type SessionRecord } from './records.ts'
import { type PlannedRecord, planRepairs } from './repair.ts'
import { BatchSigner, type CheckpointEntry, defaultKeyFile, loadKey, openCheckpointEntry, readSealCheck, type SealCheck, signCheckpointEntry, signSegmentIndex, Signer, splitMac } from './integrity.ts'
import { checkSegments, type SegmentCheck, segmentOfLine } from './segments.ts'
import { type LoadedFile, replay } from './replay.ts'
import { LogReader } from './log-reader.ts'
import { LogReading } from './reading.ts'
import { sessionsRoot } from './location.ts'
import { mebibytes, type SessionHost, SessionImpl, type TailStart } from './session.ts'
import { type CreateOptions, type Integrity, type ListOptions, type SummaryFold, type OpenOptions, type ProtectedPaths, type ReadOptions, type SessionReading, type RepairReport, type Session, SessionError, type SessionService, type SessionSummary, type SigningKey } from './types.ts'
import type { SessionStore, StoreWriter } from './store.ts'

export interface ServiceOptions {
  /** Where the logs are kept (`ctx.sessionStore`, from a store plugin). */
  store: SessionStore
  /** Masks known secrets in record data (every string, at any depth) before it is recorded. */
  mask?<T>(data: T): T
  /** The signing key's file (default `$XDG_CONFIG_HOME/goalkeeper/session.key`), created on first use. */
  keyFile?: string
  /** The signing key itself (from the environment), which then takes the place of the key file. */
  key?: Buffer
  flushDelayMs: number
  maxBatchBytes: number
  /** A log stops being written once it reaches this size (a `session/full` record says so). */
  maxSessionBytes?: number
  /** A log larger than this is refused at open, before it is read (the whole log is held in memory). */
  maxOpenBytes?: number
  /** A checkpoint is due once this many records were appended since the last (0: only at compactions). */
  checkpointEvery?: number
  /** Log format of sessions created: 2 (default), one mac per batch of lines; 1, a mac on every line. */
  logVersion?: 1 | 2
  clock?: () => number
}

const noop = () => {}
const ID_ATTEMPTS = 10

export class SessionServiceImpl implements SessionService {
  readonly store: SessionStore
  private sessions = new Map<string, SessionImpl>()
  // The service's own part: a listing of a session opened from a checkpoint still has its title and its kept folds.
  private parts = new Map<string, (session: Session) => unknown>([[SUMMARY_PART, (session) => summaryPart(session, this.keeper.keptFolds())]])
  /** Tail of the operations queued per id: open, create, fork and close of one id never interleave. */
  private locks = new Map<string, Promise<void>>()
  private stopped = false
  private keyLoad?: Promise<Signer>
  private logger: Logger
  private now: () => number
  private host: SessionHost
  /** Taken when the key is loaded: from then on every masker masks it. */
  private releaseKey = noop
  /** The environment's places, as they were at start (like `dir`). */
  private defaults = { keyFile: defaultKeyFile(), sessionsRoot: sessionsRoot() }
  /** Keeps each session's entry in the listing's index as it is written. */
  private keeper: SummaryKeeper

  constructor(private ctx: Context, private options: ServiceOptions) {
    this.store = options.store
    const clock = options.clock ?? Date.now
    // A broken injected clock must not write `"at":NaN`, which is not JSON.
    this.now = () => {
      const now = clock()
      return Number.isFinite(now) ? now : Date.now()
    }
    // Lines name the session by its id alone: the logger's name already prints "session" before them.
    this.logger = ctx.logger('session')
    this.keeper = new SummaryKeeper(this.store, this.logger, () => this.host.signer)
    this.host = {
      now: this.now,
      appended: (session, record) => dispatchIsolated(ctx, 'session/event', session, record),
      mask: options.mask,
      maxBytes: options.maxSessionBytes,
    }
  }

  get dir(): string {
    return this.store.location
  }

  get dirs(): readonly string[] {
    // A store that is not files (a database) has no directory for the workspace tools to protect.
    return this.store.dirs ?? []
  }

  get protectedPaths(): ProtectedPaths {
    // The default key and store are guarded even when this service uses others: other workspaces' sessions
    // are signed with that key and kept under that root, and a model forging them forges a person's input there.
    const keyFiles = new Set([this.options.keyFile ?? this.defaults.keyFile, this.defaults.keyFile].map((file) => path.resolve(file)))
    return { keyFiles: [...keyFiles], stores: [...new Set([...this.dirs, path.resolve(this.defaults.sessionsRoot)])] }
  }

  get(id: string): Session | undefined {
    return this.sessions.get(id)
  }

  async create(options: CreateOptions): Promise<Session> {
    if (typeof options?.cwd !== 'string' || options.cwd === '') throw new TypeError('create needs options.cwd, the working directory to record')
    checkParent(options.parent)
    if (options.id !== undefined) assertSessionId(options.id)
    const cwd = path.resolve(options.cwd)
    return this.createNew(options.id, (id, at, keyId) => [{ type: HEADER, data: header(id, at, cwd, options.parent, keyId, this.options.logVersion) }])
  }

  async open(id: string, options: OpenOptions = {}): Promise<Session> {
    assertSessionId(id)
    return this.exclusive(id, async () => {
      this.assertRunning()
      const existing = this.sessions.get(id)
      if (existing && (options.readOnly || !existing.readOnly)) return existing
      const file = this.store.locationOf(id)
      if (!options.readOnly) return this.openWritable(id, file, existing, options)
      const { loaded, tail } = await this.load(id, options.from ?? 'start', options.turns)
      const { records, start } = shaped(loaded.records, tail?.start)
      const session = new SessionImpl(this.host, id, file, records, start)
      session.integrity = loaded.integrity
      this.sessions.set(id, session)
      return session
    })
  }

  async list(options?: ListOptions): Promise<SessionSummary[]> {
    return listSessions(await this.lister(), options)
  }

  async recent(options: ListOptions & { limit: number }): Promise<RecentSessions> {
    if (!Number.isInteger(options?.limit) || options.limit < 1) throw new TypeError('recent needs options.limit, a positive whole number')
    return recentSessions(await this.lister(), options.limit, options)
  }

  keepFolds(folds: Readonly<Record<string, SummaryFold>>): () => void {
    return this.keeper.addFolds(folds)
  }

  private async lister() {
    return { store: this.store, open: this.sessions, logger: this.logger, signer: await this.ready() }
  }

  /**
   * Copies the records of the source up to `uptoSeq` (as in memory when it is open here holding its whole
   * log, else as its log streams) into a new session, from the last checkpoint at or before `uptoSeq` (or
   * from the header when there is none), then closes whatever the cut left open, exactly like crash repair.
   * Only that window is held: what a fork reads is bounded by `checkpointEvery`, not the log.
   */
  async fork(id: string, options: { uptoSeq: number; cwd?: string }): Promise<Session> {
    assertSessionId(id)
    this.assertRunning()
    if (options?.cwd !== undefined && (typeof options.cwd !== 'string' || options.cwd === '')) throw new TypeError('fork: cwd must be a non-empty string')
    const uptoSeq = options?.uptoSeq
    // A session open here from its last checkpoint (or past one) holds only its tail: the log is read
    // then, once what it appended is written.
    const open = this.sessions.get(id)
    if (open && open.firstSeq > 0 && open.writer && !open.closed) await this.flush(open)
    const memory = open && open.firstSeq === 0 ? open : undefined
    const reading = memory ? undefined : await this.read(id)
    const window = new ForkWindow(Number.isInteger(uptoSeq) ? uptoSeq : -1)
    for await (const record of memory ? memory.records : reading!) window.add(record)
    const integrity = memory ? memory.integrity : reading!.integrity
    const { header: head, kept, last, after } = window
    if (!head) throw new SessionError('SESSION_CORRUPT', `${this.store.locationOf(id)}:1: no session header`, this.store.locationOf(id), 1)
    if (!Number.isInteger(uptoSeq) || uptoSeq < 0 || uptoSeq > last || (uptoSeq > 0 && uptoSeq < after)) {
      const held = after > 1 ? `seq 0 and seqs ${after}..${last} (it is a fork that starts at its parent's checkpoint)` : `seqs 0..${last}`
      throw new SessionError('SESSION_BAD_SEQ', `cannot fork session ${id} at seq ${uptoSeq}: it holds ${held}`)
    }
    // A fork re-signs what it copies, so it may only copy what verified.
    if (integrity?.state === 'tampered' && uptoSeq >= integrity.line - 1) throw tampered(integrity)
    if (integrity?.state === 'unsigned') throw unsigned(id, this.store.locationOf(id))
    const cwd = path.resolve(options.cwd ?? head.cwd)
    // Records keep their seqs: a fork that starts at a checkpoint is held as the source opened from it.
    const from = kept[0]?.seq ?? 1
    const parent = { id, seq: uptoSeq, ...(from > 1 && { from }) }
    return this.createNew(undefined, (newId, at, keyId) => {
      const planned: PlannedRecord[] = [{ type: HEADER, data: header(newId, at, cwd, parent, keyId, this.options.logVersion) }]
      for (const record of kept) planned.push({ type: record.type, data: record.data })
      return planned.concat(planRepairs(planned))
    }, from)
  }

  async flush(session: Session): Promise<void> {
    const impl = own(session)
    if (!impl.writer) return
    if (impl.closed) {
      if (impl.writer.pending) throw new SessionError('SESSION_CLOSED', `session ${impl.id} was closed with ${impl.writer.pending} records that could not be saved`, impl.file)
      return
    }
    try {
      await impl.writer.flush()
    } catch (error) {
      throw saveError(impl, error as NodeJS.ErrnoException & { reason?: string })
    }
  }

  async close(session: Session): Promise<void> {
    const impl = own(session)
    return this.exclusive(impl.id, () => this.closeNow(impl))
  }

  provideCheckpoint(name: string, part: (session: Session) => unknown): () => void {
    if (typeof name !== 'string' || !name) throw new TypeError('provideCheckpoint: name must be a non-empty string')
    if (this.parts.has(name)) throw new TypeError(`provideCheckpoint: a part named ${name} is already provided`)
    this.parts.set(name, part)
    return () => {
      if (this.parts.get(name) === part) this.parts.delete(name)
    }
  }

  checkpoint(session: Session, reason: 'compaction' | 'interval'): SessionRecord | undefined {
    const impl = own(session)
    const parts: Record<string, unknown> = {}
    for (const [name, part] of this.parts) {
      try {
        const value = part(impl)
        if (value !== undefined) parts[name] = value
      } catch (error) {
        this.logger.warn('%s: no checkpoint written: the part %s failed: %s', impl.id, name, describeError(error))
        return undefined
      }
    }
    return impl.append('session/checkpoint', { reason, parts })
  }

  checkpointDue(session: Session): boolean {
    const impl = own(session)
    const every = this.options.checkpointEvery ?? 0
    return every > 0 && impl.nextSeq - Math.max(impl.checkpointSeq, 0) > every
  }

  async discard(session: Session): Promise<void> {
    const impl = own(session)
    if (impl.nextSeq > 1) throw new SessionError('SESSION_EXISTS', `session ${impl.id} holds records; it is kept`, impl.file)
    await this.close(impl)
    await this.store.remove(impl.id)
  }

  /** Plugin teardown: lets running operations finish, then flushes and closes every open session. */
  async dispose(): Promise<void> {
    this.stopped = true
    this.releaseKey()
    await Promise.all(this.locks.values())
    await Promise.all([...this.sessions.values()].map(async (session) => {
      try {
        await this.closeNow(session)
      } catch (error) {
        this.logger.error('%s: %d records could not be saved to %s: %s', session.id, session.writer?.pending ?? 0, session.file, (error as Error).message)
        await session.storeWriter?.close().catch(noop)
        session.markClosed()
        this.sessions.delete(session.id)
      }
    }))
  }

  private async closeNow(session: SessionImpl): Promise<void> {
    if (session.closed) return
    session.beginClose()
    await session.stopHeadCheck()
    if (session.writer) {
      try {
        await this.flush(session)
      } catch (error) {
        // A lost log cannot be written again: release it (and its lock) and say what was not saved.
        if (!session.writer.lostError) {
          session.abortClose()
          throw error
        }
        await session.storeWriter!.close().catch(noop)
        session.markClosed()
        if (this.sessions.get(session.id) === session) this.sessions.delete(session.id)
        throw error
      }
      await session.indexWrite
      // The entry as the log ends, while the lock still keeps other writers off it.
      await this.keeper.closed(session)
      await session.storeWriter!.close()
    }
    session.markClosed()
    if (this.sessions.get(session.id) === session) this.sessions.delete(session.id)
  }

  private async openWritable(id: string, file: string, existing: SessionImpl | undefined, options: OpenOptions): Promise<SessionImpl> {
    const signer = await this.ready()
    const { size, chunks, writer } = await this.store.openForWrite(id)
    let loaded: LoadedFile
    let tail: Tail | undefined
    let sideFile: string | undefined
    let segments: SegmentCheck
    try {
      // Under the lock, after the store finished any rollover a crash interrupted: segments and index agree.
      segments = await checkSegments(this.store, signer, id, true)
      if (segments.problem) throw tampered({ state: 'tampered', ...segments.problem })
      // Read under the lock: no writer moves the seal until this one lets go.
      const seal = await readSealCheck(this.store, signer, id)
      tail = options.from === 'start' ? undefined : await this.readTail(id, signer, seal, size)
      if (tail) loaded = tail.loaded
      else {
        this.checkOpenSize(id, size)
        loaded = await replay(chunks, file, id, signer, seal)
      }
      const { integrity } = loaded
      if (integrity.state === 'tampered') throw tampered(inSegment(integrity, segments))
      if (integrity.state === 'truncated' && !options.acceptTruncation) throw truncated(id, file, integrity)
      if (integrity.state === 'unsigned' && !options.adopt) throw unsigned(id, file)
      if (loaded.torn) sideFile = await writer.cutTail(loaded.goodBytes, loaded.torn)
    } catch (error) {
      await writer.close()
      throw error
    }
    const { records, start } = shaped(loaded.records, tail?.start)
    const session = existing ?? new SessionImpl(this.host, id, file, records, start)
    session.integrity = loaded.integrity
    session.lastMac = loaded.lastMac
    const lastSeq = (start?.firstSeq ?? 0) + records.length - 1
    session.attach(records, writer, this.appenderFor(session, writer, loaded.goodBytes, lastSeq, start?.header ?? headerOf(records)), start)
    session.base = tail?.offset ?? 0
    this.sessions.set(id, session)
    // What the tail read skipped is verified meanwhile, as the whole read would have.
    if (tail && loaded.integrity.state === 'signed') this.checkHead(session, tail.entry, segments)
    // A log with checkpoints read whole (its index missing, stale or forged): the index is made again.
    if (!tail && loaded.lastCheckpoint && loaded.integrity.state === 'signed') {
      this.logger.info('%s: checkpoint index rebuilt (last checkpoint at seq %d)', id, loaded.lastCheckpoint.seq)
      this.writeIndex(session, loaded.lastCheckpoint)
    }
    // What the person accepted goes on record first, signed, and the next flush writes a new seal.
    const before = loaded.integrity
    const read = session.records.length
    const accepted = before.state === 'truncated'
      ? [session.append('session/truncated', { lastSeq: before.lastSeq, ...(before.sealedSeq !== undefined && { sealedSeq: before.sealedSeq }), reason: before.reason })]
      : before.state === 'unsigned' ? [session.append('session/adopted', { unsignedLines: read })] : []
    const appended = loaded.repairs.map(({ type, data }) => session.append(type, data))
    if (accepted.length) session.integrity = { state: 'signed', lines: session.records.length - (before.state === 'unsigned' ? read : 0), unsignedPrefix: before.state === 'unsigned' ? read : 0 }
    if (appended.length || accepted.length) {
      try {
        await this.flush(session)
      } catch (error) {
        // The repair will be planned again by the next open; do not leave a half-repaired session around.
        await writer.close().catch(noop)
        session.markClosed()
        this.sessions.delete(id)
        throw error
      }
    }
    if (loaded.torn || appended.length) this.reportRepair(session, { sessionId: id, file, tornBytes: loaded.torn?.length ?? 0, ...(sideFile && { sideFile }), appended })
    return session
  }

  private reportRepair(session: SessionImpl, report: RepairReport) {
    session.repair = report
    const torn = report.sideFile ? `cut a torn last line of ${report.tornBytes} bytes (kept in ${report.sideFile}); ` : ''
    const closed = report.appended.map((record) => record.type).join(', ') || 'nothing'
    this.logger.warn('%s was not closed cleanly: %sappended %s', session.id, torn, closed)
    dispatchIsolated(this.ctx, 'session/repaired', session, report)
  }

  /** Writes a complete new session file (header first), exclusively, and opens it for writing. */
  /** `from`: the seq of the record after the header (a fork that starts at a checkpoint keeps its parent's seqs). */
  private async createNew(explicitId: string | undefined, build: (id: string, at: number, keyId: string) => PlannedRecord[], from = 1): Promise<SessionImpl> {
    for (let attempt = 1; ; attempt++) {
      const id = explicitId ?? newSessionId(this.now())
      try {
        return await this.exclusive(id, async () => {
          this.assertRunning()
          const file = this.store.locationOf(id)
          if (this.sessions.has(id)) throw exists(id, file)
          const at = this.now()
          const records: SessionRecord[] = []
          const signer = await this.ready()
          let content = ''
          let mac = signer.seed(id)
          let checkpoint: CheckpointEntry | undefined
          for (const { type, data } of build(id, at, signer.keyId)) {
            const encoded = encodeRecord(records.length && records.length - 1 + from, at, type, data)
            const signed = signer.sign(mac, encoded.line)
            // A fork that starts at a checkpoint: the index places it, so opens read from there.
            if (records.length === 1 && from > 1) checkpoint = { seq: from, offset: Buffer.byteLength(content), mac, prefix: 0 }
            mac = signed.mac
            records.push(encoded.record)
            content += `${signed.line}\n`
          }
          const last = records.at(-1)!.seq
          const writer = await this.store.create(id, Buffer.from(content), signer.seal(id, last, mac))
          const { records: held, start } = shaped(records)
          const session = new SessionImpl(this.host, id, file, held, start)
          session.lastMac = mac
          session.integrity = { state: 'signed', lines: last + 1, unsignedPrefix: 0 }
          session.attach(held, writer, this.appenderFor(session, writer, Buffer.byteLength(content), last, session.header), start)
          this.sessions.set(id, session)
          if (checkpoint) this.writeIndex(session, checkpoint)
          return session
        })
      } catch (error) {
        if (explicitId === undefined && error instanceof SessionError && error.code === 'SESSION_EXISTS' && attempt < ID_ATTEMPTS) continue
        throw error
      }
    }
  }

  private appenderFor(session: SessionImpl, writer: StoreWriter, size: number, lastSeq: number, header: SessionHeaderData) {
    session.bytes = size
    const signer = this.host.signer
    const batched = header.version === 2 && signer
    return writer.appender(size, lastSeq, {
      // Version 2: the writer signs each batch it takes; a checkpoint starts one, and its index entry learns where.
      ...(batched && { batches: new BatchSigner(signer, session.lastMac, {
        onHead: (seq, offset, mac) => {
          const entry = session.pendingCheckpoint
          if (entry?.seq === seq) Object.assign(entry, { offset, mac })
          session.placed(seq, offset)
        },
        // The session counts its lines as appended, unsigned: the macs are counted as they are added.
        onSigned: (bytes) => (session.bytes += bytes),
      }) }),
      // A store that splits logs into segments (only at checkpoints, so only those signed per batch) keeps their index signed.
      ...(batched && { segmentIndex: (segments) => signSegmentIndex(signer, session.id, segments) }),
      delayMs: this.options.flushDelayMs,
      maxBatchBytes: this.options.maxBatchBytes,
      onBackgroundError: (error) => {
        this.logger.warn('%s: background write failed, records stay queued for the next flush: %s', session.id, (error as Error).message)
      },
      onRecovered: (error) => {
        this.logger.warn('%s: written on a later attempt after a write failed (%s); nothing was lost', session.id, (error as Error).message)
      },
      seal: (seq, line) => this.host.signer!.seal(session.id, seq, splitMac(line).mac ?? ''),
      onDurable: (seq) => {
        session.durable(seq)
        const entry = session.pendingCheckpoint
        if (entry && seq >= entry.seq) {
          session.pendingCheckpoint = undefined
          this.writeIndex(session, entry)
        }
        this.keeper.written(session, seq)
        this.ctx.parallel('session/flush', session).catch((error: unknown) => {
          for (const e of error instanceof AggregateError ? error.errors : [error]) {
            this.logger.error('listener of session/flush failed: %s', describeError(e, { stack: true }))
          }
        })
      },
    })
  }

  /** What replay reads: lines from a store that keeps them, else bytes. */
  private logChunks(id: string, range: { start?: number; end?: number }) {
    return this.store.lines?.(id, range) ?? this.store.stream(id, range)
  }

  /** Replays a log without the lock (read-only opens, fork), after checking its size. */
  private async load(id: string, from: 'start' | 'checkpoint', turns?: number): Promise<{ loaded: LoadedFile; tail?: Tail }> {
    const signer = await this.ready()
    // The seal before the size: a writer seals only what it wrote, so the log read is never behind the seal.
    const seal = await readSealCheck(this.store, signer, id)
    const { size } = await this.store.version(id)
    let tail = from === 'checkpoint' ? await this.readTail(id, signer, seal, size) : undefined
    if (tail && turns !== undefined && turns > 0) tail = await this.widenTail(id, signer, tail, turns)
    if (tail) return { loaded: await this.withSegments(id, signer, tail.loaded), tail }
    this.checkOpenSize(id, size)
    return { loaded: await this.withSegments(id, signer, await replay(this.logChunks(id, { end: size }), this.store.locationOf(id), id, signer, seal)) }
  }

  /**
   * A read without the lock, held against the log's segment index: a segment missing, added, cut or
   * edited in length, or an index that does not verify, makes it tampered (what was read is still shown);
   * tampering the read found is located in its segment.
   */
  private async withSegments(id: string, signer: Signer, loaded: LoadedFile): Promise<LoadedFile> {
    const segments = await checkSegments(this.store, signer, id, false)
    const { integrity } = loaded
    if (integrity.state === 'tampered') return { ...loaded, integrity: inSegment(integrity, segments) }
    if (!segments.problem) return loaded
    return { ...loaded, integrity: { state: 'tampered', ...segments.problem } }
  }

  /**
   * The last checkpoint of log `id` as its index places it, with the header read apart, when the index and
   * the header verify and it points inside the log (`size` bytes); undefined (logged) otherwise.
   */
  private async checkpointIndex(id: string, signer: Signer, size: number) {
    const text = await this.store.readCheckpointIndex?.(id)
    if (text === undefined) return undefined
    const ignored = (why: string) => {
      this.logger.warn('%s: checkpoint index ignored (%s): the whole log is read', id, why)
      return undefined
    }
    const entry = openCheckpointEntry(signer, id, text)
    if (!entry) return ignored('it does not verify')
    if (entry.offset >= size) return ignored('it points past the end of the log')
    const header = await readHeader(this.store, id, signer)
    if (!header) return ignored('the header of the log does not verify')
    return { entry, header, ignored }
  }

  async read(id: string, options: ReadOptions = {}): Promise<SessionReading> {
    assertSessionId(id)
    this.assertRunning()
    const signer = await this.ready()
    // The seal before the size: a writer seals only what it wrote, so the log read is never behind the seal.
    const seal = await readSealCheck(this.store, signer, id)
    const { size } = await this.store.version(id)
    const index = options.from === 'checkpoint' ? await this.checkpointIndex(id, signer, size) : undefined
    const start = index && {
      offset: index.entry.offset,
      read: { ...index.entry, sealedHeader: index.header.sealed === true, batched: index.header.version === 2 },
      header: index.header,
      ignored: index.ignored,
    }
    return new LogReading(this.store, id, this.store.locationOf(id), signer, seal, size, start)
  }

  /**
   * The log from its last checkpoint on, as its checkpoint index places it, verified from there; undefined
   * (the whole log is read instead) when there is no index, or it does not verify, or the tail it points at
   * does not (the whole read then says what is wrong, with the line).
   */
  private async readTail(id: string, signer: Signer, seal: SealCheck, size: number): Promise<Tail | undefined> {
    const index = await this.checkpointIndex(id, signer, size)
    if (!index) return undefined
    const { entry, header, ignored } = index
    this.checkOpenSize(id, size - entry.offset)
    let loaded: LoadedFile
    try {
      loaded = await replay(this.logChunks(id, { start: entry.offset, end: size }), this.store.locationOf(id), id, signer, seal, { ...entry, sealedHeader: header.sealed === true, batched: header.version === 2 })
    } catch (error) {
      return ignored(`the log from it cannot be read: ${(error as Error).message}`)
    }
    const first = loaded.records[0]
    if (loaded.integrity.state !== 'signed') return ignored(`the log from it is ${loaded.integrity.state}`)
    if (first?.type !== 'session/checkpoint' || first.seq !== entry.seq) return ignored(`no checkpoint at seq ${entry.seq} where it points`)
    return { loaded, start: { firstSeq: entry.seq, header }, offset: entry.offset, entry }
  }

  /**
   * `tail` read back from its checkpoint until it holds its last `turns` turns whole. The lines before the
   * checkpoint are read in a window that doubles; they are trusted when their chain, started at the mac the
   * line before them carries (in version 2: at the first batch that starts in the window, from the mac of
   * the batch before it), ends in the mac the signed index entry names as the checkpoint's predecessor,
   * which no one without the key can forge. Undefined (the log is read whole, and says what is wrong) when
   * the window reaches the start of the log or does not verify.
   */
  private async widenTail(id: string, signer: Signer, tail: Tail, turns: number): Promise<Tail | undefined> {
    const { entry } = tail
    const startsOf = (records: readonly SessionRecord[]) => {
      let starts = 0
      for (const record of records) if (isRecordOf(record, 'turn/start')) starts++
      return starts
    }
    if (startsOf(tail.loaded.records) >= turns) return tail
    // Bounded as a whole read is: past maxOpenBytes the whole read that follows refuses it.
    const most = this.options.maxOpenBytes ?? Infinity
    for (let window = WINDOW_BYTES; entry.offset - window > 0 && window <= most; window *= 2) {
      const from = entry.offset - window
      const bytes = await readRange(this.store, id, from, entry.offset)
      const batched = tail.start.header.version === 2
      const start = windowStart(bytes, batched)
      if (!start) continue
      const file = this.store.locationOf(id)
      const read = { seq: start.seq, offset: from + start.at, mac: start.mac, prefix: entry.prefix, sealedHeader: tail.start.header.sealed === true, batched }
      if (read.seq < entry.prefix) return undefined
      const before = await replay(once(bytes.subarray(start.at)), file, id, signer, {}, read).catch(() => undefined)
      // Read without the seal (it seals the end of the log, which the tail read checked): every line of
      // the window verified, and its chain ends where the index says the checkpoint's starts.
      const state = before?.integrity.state
      if (!before || state === 'tampered' || state === 'unsigned' || before.torn || before.lastMac !== entry.mac || before.records.at(-1)?.seq !== entry.seq - 1) {
        this.logger.warn('%s: the lines before its last checkpoint do not verify: the whole log is read', id)
        return undefined
      }
      const records = before.records.concat(tail.loaded.records)
      if (startsOf(records) < turns) continue
      let first = records.length
      for (let found = 0; found < turns; ) if (isRecordOf(records[--first], 'turn/start')) found++
      const held = records.slice(first)
      // `offset` stays the checkpoint's: a widened tail is only read, never written after.
      return { ...tail, loaded: { ...tail.loaded, records: held }, start: { ...tail.start, firstSeq: held[0].seq } }
    }
    return undefined
  }

  /**
   * Verifies the log before checkpoint `entry` of a session opened from it, in the background and at low
   * priority (a chunk at a time, each after what else is waiting): every line from the header, and that
   * their chain ends in the mac the index names. An edit there is reported as the whole read reports it:
   * a warning naming the line, `session/tampered`, and the session's integrity, which its listing shows.
   */
  private checkHead(session: SessionImpl, entry: CheckpointEntry, segments: SegmentCheck) {
    const signer = this.host.signer!
    const { id, file } = session
    const stop = new AbortController()
    const run = async () => {
      // No seal: it seals the end of the log, which the open checked.
      const reader = new LogReader(file, id, signer, noop)
      let failure: { line: number; reason: string } | undefined
      try {
        // Segment by segment: each closed one must end where its seal in the index says (its last seq and mac).
        const ends = segments.entries.filter((segment) => segment.start + segment.length <= entry.offset)
        let from = 0
        for (const [i, end] of [...ends.map((segment, i) => [i, segment.start + segment.length] as const), [-1, entry.offset] as const]) {
          for await (const chunk of this.store.stream(id, { start: from, end })) {
            if (stop.signal.aborted) return
            reader.push(chunk)
            await new Promise((resolve) => setImmediate(resolve))
          }
          from = end
          const sealed = ends[i]
          if (!sealed || reader.chain.integrity.state === 'tampered') continue
          if (reader.count !== sealed.lastSeq + 1 || reader.chain.open || reader.chain.next() !== sealed.mac) {
            const line = sealed.lastSeq + 1
            failure = { line, reason: `${segments.locations[i]}:${line}: the segment does not end with the line its seal in the segment index names (seq ${sealed.lastSeq}): lines were removed, added or replaced in it` }
            break
          }
        }
        // A batch (version 2) or line cut short where the checkpoint starts is no crash's: it was written whole.
        const { torn } = failure ? { torn: undefined } : reader.finish()
        const { integrity } = reader.chain
        if (failure) {
          // Found at a segment's end.
        } else if (integrity.state === 'tampered') failure = inSegment(integrity, segments)
        else if (torn || reader.count !== entry.seq || reader.chain.next() !== entry.mac) {
          failure = { line: entry.seq + 1, reason: `${file}:${entry.seq + 1}: the lines before the checkpoint on this line do not chain into it: lines were removed, added or replaced before it` }
        }
      } catch (error) {
        if (stop.signal.aborted) return
        const line = (error as SessionError).line ?? 1
        failure = { line, reason: (error as Error).message }
      }
      if (stop.signal.aborted || session.closed) return
      if (!failure) return this.logger.debug('%s: the log before its last checkpoint verified', id)
      session.integrity = { state: 'tampered', ...failure }
      this.logger.warn('%s: %s; the log was changed before its last checkpoint by someone other than goalkeeper (found after it was opened from that checkpoint)', id, failure.reason)
      dispatchIsolated(this.ctx, 'session/tampered', session, session.integrity)
      await this.keeper.keep(session)
    }
    session.headCheck = { stop, done: run().catch((error: unknown) => this.logger.warn('%s: the log before its last checkpoint could not be verified: %s', id, describeError(error))) }
  }

  /** Keeps `entry` as the session's checkpoint index (after any earlier write); a failure only costs the next open a whole read. */
  private writeIndex(session: SessionImpl, entry: CheckpointEntry) {
    const write = this.store.writeCheckpointIndex
    const signer = this.host.signer
    if (!write || !signer) return
    const text = signCheckpointEntry(signer, session.id, entry)
    session.indexWrite = session.indexWrite.then(() => write.call(this.store, session.id, text)).catch((error: unknown) => {
      this.logger.warn('%s: checkpoint index not written (the next open reads the whole log): %s', session.id, describeError(error))
    })
  }


  /**
   * Refused before a byte is read: an open holds the records it read in memory. `size`: what would be read.
   * Streaming reads (`read`: show, fork) hold none, and no limit applies to them.
   */
  private checkOpenSize(id: string, size: number) {
    const max = this.options.maxOpenBytes
    if (max === undefined || size <= max) return
    throw new SessionError('SESSION_TOO_LARGE', `session ${id} is ${mebibytes(size)}, more than the ${mebibytes(max)} a session may have to be opened (maxOpenBytes of the session plugin): its records are held in memory once open, so raise maxOpenBytes only on a machine with several times that much memory (and node --max-old-space-size to match), or start a new session; goalkeeper show reads it whole as it streams, and fork copies it from its last checkpoint, whatever its size`, this.store.locationOf(id))
  }

  async signingKey(): Promise<SigningKey> {
    const signer = await this.ready()
    return { id: signer.keyId, source: this.options.key ? 'the key setting of the session plugin' : `key file ${path.resolve(this.options.keyFile ?? defaultKeyFile())}` }
  }

  /** The signing key, loaded (or created) once, on first use. */
  private ready(): Promise<Signer> {
    this.keyLoad ??= (this.options.key ? Promise.resolve(this.options.key) : loadKey(this.options.keyFile ?? defaultKeyFile())).then((key) => {
      if (!this.stopped) this.releaseKey = holdSecret(key.toString('hex'))
      return (this.host.signer = new Signer(key))
    })
    return this.keyLoad
  }

  private assertRunning() {
    if (this.stopped) throw new SessionError('SESSION_CLOSED', 'the session service has stopped')
  }

  private exclusive<T>(id: string, task: () => Promise<T>): Promise<T> {
    const result = (this.locks.get(id) ?? Promise.resolve()).then(task)
    const tail = result.then(noop, noop)
    this.locks.set(id, tail)
    tail.then(() => {
      if (this.locks.get(id) === tail) this.locks.delete(id)
    })
    return result
  }
}

/** A log read from its last checkpoint: the read, where its records start and the byte they start at. */
interface Tail {
  loaded: LoadedFile
  start: TailStart
  offset: number
  /** The checkpoint's index entry, as it verified. */
  entry: CheckpointEntry
}

/** The first window `widenTail` reads before a checkpoint; it doubles until it holds the turns asked for. */
const WINDOW_BYTES = 1 << 20

async function readRange(store: SessionStore, id: string, start: number, end: number): Promise<Buffer> {
  const parts: Buffer[] = []
  for await (const chunk of store.stream(id, { start, end })) parts.push(chunk)
  return Buffer.concat(parts)
}

async function* once(bytes: Buffer): AsyncIterable<Buffer> {
  yield bytes
}

/**
 * Where the first whole line of a window of a log starts, its seq and the mac it chains from: the one the
 * (possibly cut) line before it ends with. In a log of version 2 (`batched`) that line must start a batch,
 * the one after the first batch whose first line is whole in the window, and the mac is that batch's.
 * Undefined when the window holds no such pair.
 */
function windowStart(bytes: Buffer, batched: boolean): { at: number; seq: number; mac: string } | undefined {
  // Every line that ends in the window; the first may be cut at its start, so only its mac (at its end) is read.
  const lines: { begin: number; end: number }[] = []
  for (let begin = 0, end = bytes.indexOf(0x0a); end >= 0; begin = end + 1, end = bytes.indexOf(0x0a, begin)) {
    lines.push({ begin, end })
  }
  const split = (index: number) => splitMac(bytes.subarray(lines[index].begin, lines[index].end).toString('utf8'))
  const parse = (body: string) => {
    try {
      return JSON.parse(body)
    } catch {
      return undefined
    }
  }
  // Version 2: a whole line with a mac starts a batch, `"batch":n` lines long; the batch after it chains from it.
  for (let index = batched ? 1 : 0; index < lines.length; index++) {
    const { body, mac } = split(index)
    if (!mac) continue
    const value = batched ? parse(body) : undefined
    if (batched && value === undefined) continue
    const next = index + (Number.isSafeInteger(value?.batch) && value.batch > 1 ? value.batch : 1)
    if (next >= lines.length) return undefined
    const after = split(next)
    if (batched && !after.mac) continue
    const seq = parse(after.body)?.seq
    if (Number.isInteger(seq)) return { at: lines[next].begin, seq, mac }
  }
  return undefined
}

/** The header line of a log, when it verifies under `signer` (it is the chain's first link, so it stands alone). */
async function readHeader(store: SessionStore, id: string, signer: Signer): Promise<SessionHeaderData | undefined> {
  const parts: Buffer[] = []
  for await (const chunk of store.stream(id)) {
    const end = chunk.indexOf(0x0a)
    parts.push(end < 0 ? chunk : chunk.subarray(0, end))
    if (end >= 0) break
  }
  const { body, mac } = splitMac(Buffer.concat(parts).toString('utf8'))
  if (!mac || signer.mac(signer.seed(id), body) !== mac) return undefined
  try {
    const record = JSON.parse(body)
    return record?.seq === 0 && record.type === HEADER && record.data?.id === id ? record.data : undefined
  } catch {
    return undefined
  }
}

function own(session: Session): SessionImpl {
  if (!(session instanceof SessionImpl)) throw new TypeError('not a session of ctx.sessions')
  return session
}

/**
 * A flush failure as callers report it: what happened, how many records are not saved and the last seq
 * that is (`unsaved`, `savedThrough`), the file-system `code` or `SESSION_LOST`, the cause.
 */
function saveError(session: SessionImpl, cause: NodeJS.ErrnoException & { reason?: string }) {
  const writer = session.writer!
  const unsaved = writer.pending
  const savedThrough = writer.durableSeq
  const kept = cause.code === 'SESSION_LOST' && cause.reason === 'removed'
    ? `records 0..${savedThrough} were saved before it was removed`
    : `records 0..${savedThrough} are saved in ${session.file}`
  const message = `cannot save session ${session.id}: ${cause.message}; ${unsaved} record${unsaved === 1 ? '' : 's'} not saved, ${kept}`
  return Object.assign(new Error(message, { cause }), { code: cause.code, ...(cause.reason && { reason: cause.reason }), unsaved, savedThrough })
}

/** Tampering in a log kept in segments: the reason also names the segment file the line is in. */
function inSegment<T extends { line: number; reason: string }>(integrity: T, segments: SegmentCheck): T {
  const location = segmentOfLine(segments, integrity.line)
  return location ? { ...integrity, reason: `${integrity.reason} (in segment ${location})` } : integrity
}

function tampered(integrity: Extract<Integrity, { state: 'tampered' }>) {
  const file = integrity.reason.slice(0, integrity.reason.indexOf(`:${integrity.line}: `))
  if (integrity.otherKey) return new SessionError('SESSION_TAMPERED', `${integrity.reason}; the session was signed with another key, so nothing of it can be verified with this one and it is not opened for writing (every machine of a fleet needs the same session key)`, file, integrity.line)
  return new SessionError('SESSION_TAMPERED', `${integrity.reason}; the log was changed by someone other than goalkeeper, so nothing from this line on is trusted and it is not opened for writing`, file, integrity.line)
}

function truncated(id: string, file: string, integrity: Extract<Integrity, { state: 'truncated' }>) {
  return new SessionError('SESSION_TRUNCATED', `session ${id} was cut short: ${integrity.reason}; it is not written past seq ${integrity.lastSeq} until that is accepted`, file, integrity.lastSeq + 2)
}

function unsigned(id: string, file: string) {
  return new SessionError('SESSION_UNSIGNED', `session ${id} is not signed (${file}): it was written before sessions were signed, or its signatures were removed, so it cannot be told from a forged one; it is not written or forked until it is adopted`, file)
}

function exists(id: string, file: string) {
  return new SessionError('SESSION_EXISTS', `session ${id} already exists: ${file}`, file)
}

function header(id: string, at: number, cwd: string, parent: SessionHeaderData['parent'], keyId: string, version: 1 | 2 = 2): SessionHeaderData {
  return { version, id, createdAt: at, cwd, ...(parent && { parent: { id: parent.id, seq: parent.seq, ...(parent.from !== undefined && { from: parent.from }) } }), sealed: true, keyId }
}

function checkParent(parent: CreateOptions['parent']) {
  if (parent === undefined) return
  if (typeof parent !== 'object' || parent === null || typeof parent.id !== 'string' || !Number.isInteger(parent.seq) || parent.seq < 0) {
    throw new TypeError('create: parent must be { id: string, seq: non-negative integer }')
  }
}

/**
 * Records as a session holds them: `records[i].seq === firstSeq + i`. A log read whole whose header is
 * followed by a checkpoint with its parent's seq (a fork that starts at a checkpoint) is held like a log
 * opened from that checkpoint: its header apart, its records from the checkpoint on.
 */
function shaped(records: SessionRecord[], start?: TailStart): { records: SessionRecord[]; start?: TailStart } {
  if (start || records[0]?.seq !== 0 || records.length < 2 || records[1].seq === 1) return { records, start }
  return { records: records.slice(1), start: { firstSeq: records[1].seq, header: headerOf(records) } }
}

/**
 * What a fork copies, kept while its source streams: the header, then the records up to `uptoSeq` from the
 * last checkpoint at or before it (the records before a checkpoint are let go of when it comes).
 */
class ForkWindow {
  header?: SessionHeaderData
  kept: SessionRecord[] = []
  /** The source's last seq, and the seq after its header (1, or the checkpoint a fork starts at). */
  last = -1
  after = 1
  constructor(private uptoSeq: number) {}

  add(record: SessionRecord) {
    const previous = this.last
    this.last = record.seq
    if (record.seq === 0) {
      if (isRecordOf(record, 'session/header')) this.header = record.data
      return
    }
    if (previous === 0) this.after = record.seq
    if (record.seq > this.uptoSeq) return
    if (isRecordOf(record, 'session/checkpoint')) this.kept = []
    this.kept.push(record)
  }
}
