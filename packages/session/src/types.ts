import type { AppendData, Appended, SessionHeaderData, SessionRecord } from './records.ts'

export interface Session {
  readonly id: string
  readonly header: SessionHeaderData
  /**
   * The records in order from `firstSeq` on: `records[i].seq === firstSeq + i`. Read-only view. A session
   * opened from its last checkpoint holds that checkpoint and what follows it, not the whole log; a session
   * being written lets go of what precedes its last checkpoint once that is durable and the next turn
   * starts (its `turn/start` appended), so `firstSeq` grows and a reader keeps its place as a seq
   * (`recordsSince`, `nextSeqOf`), never as a position in this array.
   */
  readonly records: readonly SessionRecord[]
  /** Seq of `records[0]`: 0 (the header) when the whole log is held, else the checkpoint it holds from. */
  readonly firstSeq: number
  /** The file this session persists to. */
  readonly file: string
  /** True for sessions opened with `{ readOnly: true }`: `append` throws. */
  readonly readOnly: boolean
  readonly closed: boolean
  /** What the log's signatures say (read-only opens of a tampered log have `state: 'tampered'`). */
  readonly integrity: Integrity
  /** What opening this session for writing had to repair after a crash; absent when nothing was repaired. */
  readonly repair?: RepairReport
  /**
   * Appends a record (seq and at assigned here), queues it for write-behind, emits `session/event`. The data
   * of a registered type (`RecordData`) is checked against its declaration.
   */
  append<K extends string>(type: K, data: AppendData<K>): Appended<K>
}

/**
 * What the signatures of a log and its seal say. `signed`: every line from `unsignedPrefix + 1` on
 * verified (an unsigned prefix is a log from before signing, adopted). `unsigned`: no line is signed
 * and neither the header nor the store says it ever was (a log from before signing): readable, but
 * not written or forked until adopted. `tampered`: `line` (1-based) is the first line that does not
 * verify; nothing from it on is trusted, and the session cannot be opened for writing; `otherKey` is set
 * when the header fails and names another key's id (`SessionHeaderData.keyId`): signed with another key. `truncated`:
 * every line verifies, but the log is shorter than its seal says (`sealedSeq`, the last seq written;
 * absent when the seal is missing or does not verify): lines were cut off its end after `lastSeq`,
 * and it is not written again until that is accepted (`acceptTruncation`).
 */
export type Integrity =
  | { state: 'unsigned' }
  | { state: 'signed'; lines: number; unsignedPrefix: number }
  | { state: 'tampered'; line: number; reason: string; otherKey?: string }
  | { state: 'truncated'; lastSeq: number; sealedSeq?: number; reason: string }

export interface SessionSummary {
  id: string
  file: string
  createdAt: number
  updatedAt: number
  records: number
  /** First human message text, shortened. */
  title?: string
  cwd: string
  parent?: { id: string; seq: number }
  /**
   * Set when the log cannot be read (`SESSION_CORRUPT`, `SESSION_BAD_SEQ`, a file that is not a regular
   * file): it is listed anyway, with the reason naming `file:line`, so that it is never hidden. Then
   * `createdAt`, `updatedAt` and `records` are 0 and `cwd` is empty. A tampered log (`SESSION_TAMPERED`,
   * `line` the first line that does not verify), one cut short (`SESSION_TRUNCATED`, `line` the line
   * after its last) and an unsigned one (`SESSION_UNSIGNED`) are listed with their problem too, and
   * with what they hold; a log whose header names another key's id and fails under this key is
   * `SESSION_TAMPERED` with `otherKey`, that id: signed with another key rather than edited.
   */
  problem?: { code: string; line?: number; reason: string; otherKey?: string }
  /** The result of each fold asked for (`list({ folds })`), by name; absent when none was asked for. */
  folds?: Record<string, unknown>
}

/**
 * A fold of a whole log into a small JSON value that listing keeps in the session's summary, so that
 * what a listing prints per session (a goal's phase, say) does not need the log read again. Runs over
 * every record while a summary is built (from memory for a session open in this process).
 */
export interface SummaryFold<T = unknown> {
  /** Names the fold's logic: summaries kept by another version are rebuilt. Change it whenever the result for the same records would. */
  readonly version: string
  start(): SummaryFoldRun<T>
  /**
   * Optional: a run that goes on from `state`, what a run's `state()` gave after the record before a
   * checkpoint. While such a fold is kept (`keepFolds`), every checkpoint carries its state (the service's
   * `summary` part, by `version`), so a session that holds its records from a checkpoint on (opened from it,
   * or a live one that let go of its head) still folds as its whole log would. A fold without it sees such
   * a session from the checkpoint on, unless it reads a part of its own there (the goal fold does).
   */
  resume?(state: unknown): SummaryFoldRun<T>
}

export interface SummaryFoldRun<T = unknown> {
  /** Every record of the log in order (up to a torn tail). */
  add(record: SessionRecord): void
  /** The fold's result: a JSON value. */
  result(): T
  /** What `resume` takes back (a JSON value); needed when the fold has `resume`. */
  state?(): unknown
}

export interface ListOptions {
  /** Folds whose results each summary should carry in `folds`, by name. */
  folds?: Readonly<Record<string, SummaryFold>>
  /**
   * Every project's sessions, not only this store's: a file store then also lists the default store of
   * every other project (`$XDG_STATE_HOME/goalkeeper/sessions/*`). A database lists everything anyway.
   */
  everywhere?: boolean
}

/** What opening a session for writing had to repair. */
export interface RepairReport {
  sessionId: string
  file: string
  /** Bytes cut off a torn last line, kept in `sideFile`. */
  tornBytes: number
  sideFile?: string
  /** Repair records appended (tool results, step/end, turn/end interrupted). */
  appended: SessionRecord[]
}

export interface OpenOptions {
  /** Read-only opens never repair or write. */
  readOnly?: boolean
  /**
   * Where reading starts. `checkpoint` (the default for writing): at the last checkpoint its store's index
   * places, verifying the chain from there, so that opening costs what the tail holds, not the whole log;
   * `records` then start at `firstSeq`. Without a usable index the whole log is read. `start` (the default
   * read-only): the whole log, every line verified from the header.
   */
  from?: 'checkpoint' | 'start'
  /**
   * With `from: 'checkpoint'`, read-only: reads back from the checkpoint until the last `turns` turns are
   * held whole (from their `turn/start`), verifying the lines before the checkpoint by their chain into the
   * mac its signed index entry gives; `records` then start at the checkpoint or at the first of those
   * turns, whichever is earlier. What `show --tail` reads: the last turn of a log of any length, for the
   * cost of what the tail and that turn hold.
   */
  turns?: number
  /**
   * Opens a log cut short (`integrity.state === 'truncated'`) for writing anyway: the person accepted
   * that its lost tail is gone. A `session/truncated` record says so in the log, and a new seal follows.
   */
  acceptTruncation?: boolean
  /**
   * Opens an unsigned log from before signing for writing: the person checked it and vouches for it.
   * A `session/adopted` record is signed over the whole unsigned prefix, and a seal follows; from then
   * on the log is signed like any other.
   */
  adopt?: boolean
}

export interface ReadOptions {
  /**
   * `start` (default): every record from the header, every line verified from it. `checkpoint`: from the
   * last checkpoint its store's signed index places (its header read apart, the chain verified from the
   * mac the index gives), or from the start without a usable index.
   */
  from?: 'start' | 'checkpoint'
}

/**
 * A session log read as it streams (`SessionService.read`): iterating it reads the log chunk by chunk with
 * the replay rules and hands on each record once its line (or, in version 2, its batch) is verified, holding
 * one chunk's records and the batch being read, never the log. Iterating it again reads the same bytes again,
 * against the same seal. A torn tail is left out; a corrupt line throws (`SESSION_CORRUPT`) where it is met.
 */
export interface SessionReading extends AsyncIterable<SessionRecord> {
  readonly id: string
  readonly file: string
  /** The bytes read: the log's size when `read` was called (what a writer appends later is not read). */
  readonly size: number
  /** The header: set once read (at once when reading from a checkpoint, which reads it apart). */
  readonly header?: SessionHeaderData
  /**
   * What the signatures say so far. `tampered` is set as soon as the first bad line (or batch) is read,
   * before any record from it is handed on, so a consumer marks the records from `line - 1` on as they come;
   * `truncated`, and `unsigned` (no signed line, or a seal for a log without signatures: tampered at line 1),
   * are known only once the iteration ended, and so is the count of `signed`.
   */
  readonly integrity: Integrity
  /** The most records held at once so far (those of one chunk and the batch being read): bounded, whatever the log's length. */
  readonly peakHeld: number
}

export interface CreateOptions {
  cwd: string
  parent?: { id: string; seq: number }
  /** Optional explicit id (tests); otherwise generated. */
  id?: string
}

/** Absolute paths, as configured (not resolved through symbolic links). */
export interface ProtectedPaths {
  readonly keyFiles: readonly string[]
  readonly stores: readonly string[]
}

export interface SessionService {
  /** Where new sessions are created. */
  readonly dir: string
  /** Every directory whose sessions are listed and opened (`dir` first, then older places such as a workspace's `.goalkeeper/sessions`); none for a database. */
  readonly dirs: readonly string[]
  /**
   * What no tool may reach, whatever the workspace: the signing key's files (this service's and the
   * default one), which no tool may read, nor their directories; and every directory of session logs
   * (`dirs`, and the root of every workspace's default store, `$XDG_STATE_HOME/goalkeeper/sessions`), which
   * no tool may change.
   */
  readonly protectedPaths: ProtectedPaths
  /**
   * The signing key's id (`Signer.keyId`, never the key) and where the key comes from (the key file's path,
   * or the `key` setting): what a fleet compares before a worker takes a job. Loads the key as first use does.
   */
  signingKey(): Promise<SigningKey>
  create(options: CreateOptions): Promise<Session>
  open(id: string, options?: OpenOptions): Promise<Session>
  /**
   * Reads a log as it streams, without holding its records (`SessionReading`): what `show` prints and `fork`
   * copies from, for a log of any length (no `maxOpenBytes`). Reads what the store holds: records a session
   * open in this process has not written yet are not read.
   */
  read(id: string, options?: ReadOptions): Promise<SessionReading>
  /** A session already open in this process. */
  get(id: string): Session | undefined
  /**
   * Summaries of every session, newest activity first. A log is read only when its kept summary is
   * missing or stale (the log changed, or a fold asked for is not in it).
   */
  list(options?: ListOptions): Promise<SessionSummary[]>
  /**
   * The `limit` most recent sessions and how many there are in all, from the index of kept summaries:
   * only the rows returned are checked against their logs (a log changed since its entry, by hand
   * too, is read again and put where it now belongs), so the cost follows `limit`, not the number of
   * sessions. A store without an index, or an index that is missing or does not verify, is listed
   * whole (and the index rebuilt).
   */
  recent(options: ListOptions & { limit: number }): Promise<{ sessions: SessionSummary[]; total: number }>
  /**
   * Folds whose results every entry a writer keeps in the index carries (the folds its listings ask
   * for: `goalkeeper sessions` asks for the goal's and the fleet worker's), so that those listings read
   * no log; returns a function that stops it.
   */
  keepFolds(folds: Readonly<Record<string, SummaryFold>>): () => void
  fork(id: string, options: { uptoSeq: number; cwd?: string }): Promise<Session>
  /** Resolves when every record appended before the call is written and fsync'd; rejects with the cause otherwise. */
  flush(session: Session): Promise<void>
  close(session: Session): Promise<void>
  /**
   * Adds what plugin `name` contributes to every checkpoint: `part(session)` returns a JSON value (its folded
   * state for that session, up to its last record) or undefined (it holds nothing for it). Pure: it must not
   * append. Returns the function that withdraws it (an effect).
   */
  provideCheckpoint(name: string, part: (session: Session) => unknown): () => void
  /**
   * Appends a `session/checkpoint` record holding every provided part, so that the session can later be
   * opened from here. Written between turns (a compaction's, or every `checkpointEvery` records). Returns
   * undefined, writing nothing, when a part failed (logged): a checkpoint missing a part would lose it.
   */
  checkpoint(session: Session, reason: 'compaction' | 'interval'): SessionRecord | undefined
  /** Whether `checkpointEvery` records (of the session plugin's config) were appended since the last checkpoint. */
  checkpointDue(session: Session): boolean
  /**
   * Closes and removes a session that holds nothing but its header (a command refused before any work):
   * nothing is left behind. Refuses (`SESSION_EXISTS`) a session with records.
   */
  discard(session: Session): Promise<void>
}

export class SessionError extends Error {
  constructor(public code: 'SESSION_NOT_FOUND' | 'SESSION_CORRUPT' | 'SESSION_READ_ONLY' | 'SESSION_CLOSED' | 'SESSION_EXISTS' | 'SESSION_BAD_SEQ' | 'SESSION_LOCKED' | 'SESSION_TAMPERED' | 'SESSION_TRUNCATED' | 'SESSION_UNSIGNED' | 'SESSION_FULL' | 'SESSION_TOO_LARGE' | 'SESSION_CONFIG', message: string, public file?: string, public line?: number) {
    super(message)
    this.name = 'SessionError'
  }
}

/** Which key signs this service's records, by id, and where it comes from (shown when fleets disagree). */
export interface SigningKey {
  id: string
  source: string
}
