import type { SessionSummary } from './types.ts'

/**
 * Where session logs are kept. The service (`ctx.sessions`) owns records, replay and repair; a store
 * only keeps bytes: one append-only log per session id, with one writer at a time. `JsonlFileStore`
 * keeps them as JSONL files; another backend (a database) implements the same interface.
 */
export interface SessionStore {
  /** Where this store keeps its logs, for messages (`list` and `show` name it). */
  readonly location: string
  /** Where one session's log is, for messages and `Session.file`. */
  locationOf(id: string): string
  /**
   * Creates the log of a new session holding `content`, atomically and exclusively (`SESSION_EXISTS` if
   * the id is taken), and opens it for writing with the writer lock held.
   */
  create(id: string, content: Buffer): Promise<StoreWriter>
  /**
   * Takes the writer lock (`SESSION_LOCKED`, naming the holder, if another process has it; nothing is
   * written then), and returns the log's bytes as they are.
   */
  openForWrite(id: string): Promise<{ bytes: Buffer; writer: StoreWriter }>
  /** The whole log, without the lock (`SESSION_NOT_FOUND` if there is none). */
  read(id: string): Promise<Buffer>
  /** The log chunk by chunk, without the lock, so listing large logs holds one chunk at a time. */
  stream(id: string): AsyncIterable<Buffer>
  /** Ids of the logs in the store, in no order; entries that are not logs are skipped. */
  list(): Promise<string[]>
  /** Removes a log that no writer holds. */
  remove(id: string): Promise<void>
  /**
   * Every log's summary without reading its records, for a store that keeps them (a database keeps a
   * row per session, updated with each batch). Without it, listing streams every log.
   */
  summaries?(): Promise<SessionSummary[]>
  /** Releases what the store holds (connections); called when the session plugin stops. */
  close?(): Promise<void>
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
  push(line: string, seq: number): void
  /**
   * The log reached its size limit: lines pushed from now on are not written (what was pushed before still
   * is), and every flush that has such lines pending rejects with `error`.
   */
  seal(error: Error): void
  /** Resolves once every line pushed before the call is durable; rejects with the cause otherwise. */
  flush(): Promise<void>
}
