import type { BatchSigner, SegmentEntry } from './integrity.ts'
import type { LogChunk } from './log-reader.ts'
import type { IndexReader } from './summary-index.ts'

/**
 * Where session logs are kept. The service (`ctx.sessions`) owns records, replay and repair; a store
 * only keeps bytes: one append-only log per session id, with one writer at a time. A store plugin provides
 * one as `ctx.sessionStore`: JSONL files (`@goalkeeper/session-jsonl`) or PostgreSQL (`@goalkeeper/session-postgres`).
 */
export interface SessionStore {
  /** Where this store keeps its logs, for messages (`list` and `show` name it). */
  readonly location: string
  /** Where one session's log is, for messages and `Session.file`. */
  locationOf(id: string): string
  /**
   * Creates the log of a new session holding `content`, atomically and exclusively (`SESSION_EXISTS` if
   * the id is taken), and opens it for writing with the writer lock held. `seal` is its first seal,
   * kept before the log appears (a log whose header says it is sealed never exists without one).
   */
  create(id: string, content: Buffer, seal?: string): Promise<StoreWriter>
  /**
   * The log's seal as last written (opaque text the service signs), kept where cutting the log does not
   * cut it; undefined when there is none. A store without seals leaves it out (no cut tail is detected).
   */
  readSeal?(id: string): Promise<string | undefined>
  /**
   * The log's checkpoint index as last written (opaque text the service signs: where the last checkpoint
   * starts), or undefined. A store without one leaves both out: its logs are always read whole.
   */
  readCheckpointIndex?(id: string): Promise<string | undefined>
  /** Replaces the log's checkpoint index, atomically. */
  writeCheckpointIndex?(id: string, text: string): Promise<void>
  /**
   * A store that keeps a log as several files (segments; every offset the service sees is still one of
   * their concatenation): the closed segments as they stand (number, logical start, length), oldest
   * first, and `pending`, a closed segment whose rollover was caught half done by this read (its file is
   * still the live one: read as part of it). A store of one piece per log leaves both out.
   */
  segments?(id: string): Promise<{ closed: StoredSegment[]; pending?: StoredSegment }>
  /** The log's segment index as last written (opaque text the service signs, `SegmentEntry`), or undefined. */
  readSegmentIndex?(id: string): Promise<string | undefined>
  /**
   * Takes the writer lock (`SESSION_LOCKED`, naming the holder, if another process has it; nothing is
   * written then), and returns the log's size and its bytes up to that size, chunk by chunk (read when
   * iterated: a caller that refuses the log after seeing its size reads nothing), as bytes or, from a
   * store that keeps lines, as `lines` gives them.
   */
  openForWrite(id: string): Promise<{ size: number; chunks: AsyncIterable<LogChunk>; writer: StoreWriter }>
  /**
   * The log chunk by chunk, bytes `start` (default 0) to `end` (exclusive, default the end), without the
   * lock (`SESSION_NOT_FOUND` if there is none), so reading a large log holds one chunk at a time.
   */
  stream(id: string, range?: { start?: number; end?: number }): AsyncIterable<Buffer>
  /**
   * `stream` for replay, from a store that keeps lines (a database): whole lines as strings without their
   * newlines, so that they are not encoded into bytes only to be decoded and split again; a chunk cut
   * by the range stays bytes. A store that keeps bytes leaves it out.
   */
  lines?(id: string, range?: { start?: number; end?: number }): AsyncIterable<LogChunk>
  /**
   * The log's size and a token that changes whenever its bytes may have changed (any write, cut or
   * replacement), without reading it (`SESSION_NOT_FOUND` if there is none). Summaries are bound to it.
   */
  version(id: string): Promise<{ size: number; token: string }>
  /**
   * A small log whole, read with its version and its seal together (far fewer calls than `version`,
   * `readSeal` and `stream` each make): the version as `version` gives it, taken before the seal is read,
   * and the log's bytes up to that size. Undefined when the log is larger than `maxBytes` or is not one
   * piece (closed segments, a rollover under way): the caller reads it as usual. `SESSION_NOT_FOUND` if
   * there is none. A store that cannot do better than those three calls leaves it out.
   */
  snapshot?(id: string, maxBytes: number): Promise<LogSnapshot | undefined>
  /**
   * Ids of the logs in the store, in no order; entries that are not logs are skipped. `everywhere`: also
   * the logs of every other project a file store can see (`ListOptions.everywhere`); `locationOf` and
   * reads find those too.
   */
  list(options?: { everywhere?: boolean }): Promise<string[]>
  /** Removes a log that no writer holds. */
  remove(id: string): Promise<void>
  /**
   * The listing's index of kept summaries (`SummaryIndexStore`): this store's own first (the one
   * written), then, with `everywhere`, those of the other projects' stores (only read). A store
   * without it keeps summaries through `readSummaries` / `writeSummaries`.
   */
  indexes?(options?: { everywhere?: boolean }): SummaryIndexStore[]
  /**
   * The `limit` sessions of newest activity (ties: id descending), each with its log's `version` and the
   * summary kept for it (`writeSummaries`), and how many sessions there are in all: what
   * `ctx.sessions.recent` asks of a store without `indexes` (a database, in one query). The order is the
   * store's own (the last record's time it keeps per log); every summary is verified before use.
   */
  newest?(limit: number): Promise<NewestSessions>
  /**
   * The listing summaries kept for the logs, by id, as `writeSummaries` got them (stores without
   * `indexes`). A cache: any may be missing or stale, and the service verifies each (its signature,
   * its log's `version`) before use.
   */
  readSummaries?(options?: { everywhere?: boolean }): Promise<Map<string, string>>
  /** Keeps `entries` (replacing those of the same ids) and forgets the summaries of `removed`; best effort. */
  writeSummaries?(entries: ReadonlyMap<string, string>, removed: readonly string[]): Promise<void>
  /**
   * The directories the logs are kept in, which the workspace tools keep out of a model's reach; a store
   * that is not files (a database) has none.
   */
  readonly dirs?: readonly string[]
  /**
   * The logs are read and written from several machines (a database): the signing key must be one they
   * share (`key`, or an explicit `keyFile`), never one made on first use by one of them.
   */
  readonly shared?: boolean
  /**
   * Holds the store open until the returned function is called. The session service holds it while it
   * runs: a whole-app shutdown stops plugins in no set order, and a store plugin closes what it holds
   * (connections) only once every holder let go, so the last flushes still reach it.
   */
  retain?(): () => void
  /** Releases what the store holds (connections); called by the plugin that opened it. */
  close?(): Promise<void>
}

/** What `SessionStore.snapshot` returns. */
export interface LogSnapshot {
  size: number
  token: string
  /** The log's bytes up to `size` (fewer when it was cut meanwhile, as `stream` would read). */
  bytes: Buffer
  /** The seal as `readSeal` gives it. */
  seal?: string
}

/** A closed segment of a log as a store holds it. */
export interface StoredSegment {
  /** Its number: 1 holds the header, each next one follows it. */
  n: number
  /** Where it starts in the log (the concatenation of the segments). */
  start: number
  length: number
  /** Where it is, for messages (`<id>.jsonl.000001`). */
  location: string
}

/** What `SessionStore.newest` returns. */
export interface NewestSessions {
  /** Newest activity first. */
  sessions: { id: string; updatedAt: number; version: { size: number; token: string }; summary?: string }[]
  total: number
}

/** A log opened for writing; holds the writer lock until `close`. */
export interface StoreWriter {
  /**
   * Cuts everything after `size` off the log, keeping the cut bytes aside first; returns where they are
   * kept. Idempotent: run again after a crash at any point, it keeps the same bytes in the same place.
   */
  cutTail(size: number, tail: Buffer): Promise<string>
  /** Starts appending at byte `size`, after the record `lastSeq`. Called once. */
  appender(size: number, lastSeq: number, options: AppenderOptions): Appender
  /** Closes the appender (dropping what was not flushed) and releases the lock. */
  close(): Promise<void>
}

export interface AppenderOptions {
  /** How long appended lines may wait before a background write. */
  delayMs: number
  /** Queue size (in characters) that triggers a background write without waiting for the delay. */
  maxBatchBytes: number
  /** A background write failed (reported once until a write succeeds); its lines stay queued for the next attempt. */
  onBackgroundError(error: unknown): void
  /** Every line up to `seq` is now durable. */
  onDurable(seq: number): void
  /**
   * A write succeeded after one or more failed (a flush rejected, a background write failed): what
   * they could not write is written now. Called once per streak, with the first failure.
   */
  onRecovered?(error: unknown): void
  /**
   * The seal to keep once the line `line` (record `seq`, without its newline) is durable; the store
   * keeps the latest after each write that made lines durable, never ahead of what is durable.
   */
  seal?(seq: number, line: string): string
  /**
   * Log version 2: lines are pushed unsigned and signed here when a write takes them, one mac per batch
   * (`seal` then gets the first line of the last batch, which carries the mac).
   */
  batches?: BatchSigner
  /**
   * The signed text of a segment index holding `segments` (a store that splits a log into segments writes
   * it at each rollover, before the new segment is written to; `mac`: the one its last batch or line ends with).
   */
  segmentIndex?(segments: readonly SegmentEntry[]): string
}

/** Write-behind appending of encoded record lines. */
export interface Appender {
  /** Records appended but not yet durable. */
  readonly pending: number
  /** Seq of the last durable record. */
  readonly durableSeq: number
  /**
   * Set when the log was removed or replaced by someone else while open (`code: 'SESSION_LOST'`,
   * `reason: 'removed' | 'replaced' | 'truncated'`, or `'taken'` when a database lease passed to another writer): nothing more is written and every flush rejects with it.
   */
  readonly lostError?: Error
  /** `head`: the line starts a batch of its own (a checkpoint), in a log signed per batch. */
  push(line: string, seq: number, head?: boolean): void
  /** Whether lines are pushed unsigned and signed per batch when written (log version 2). */
  readonly signsBatches: boolean
  /**
   * The log reached its size limit: lines pushed from now on are not written (what was pushed before still
   * is), and every flush that has such lines pending rejects with `error`.
   */
  seal(error: Error): void
  /** Resolves once every line pushed before the call is durable; rejects with the cause otherwise. */
  flush(): Promise<void>
}

/**
 * Where one directory's index of kept summaries lives: a compacted part, replaced whole now and then,
 * and a journal that writers append their entries to (the service signs both; `summary-index.ts`).
 */
export interface SummaryIndexStore {
  /** Where the index is, for messages. */
  readonly location: string
  /**
   * The journal (with what a compaction under way took from it) and then the compacted part, in
   * that order, so that an entry moved by a compaction meanwhile is read in one place or the other.
   */
  read(): Promise<{ journal: Buffer; compacted?: CompactedIndex }>
  /** Appends lines to the journal in one write; an append that raced a compaction is written again. */
  append(lines: string): Promise<void>
  /**
   * Under the index lock: takes the journal, and replaces the compacted part with what `build` makes of
   * it and of the current compacted part. Resolves false, doing nothing, when another process holds the lock.
   */
  compact(build: (journal: Buffer, compacted?: CompactedIndex) => Promise<Buffer>): Promise<boolean>
}

/** The compacted part of an index as read: its size and its bytes, read by range. */
export interface CompactedIndex extends IndexReader {
  readonly size: number
  close(): Promise<void>
}
