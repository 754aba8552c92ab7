import path from 'node:path'
import type { Context } from 'cordis'
import { liveMasker, maskDeep, redactedLabel } from '@goalkeeper/kit'
import { defaultKeyFile } from './integrity.ts'
import Schema from 'schemastery'
import type { SessionRecord } from './records.ts'
import { SessionServiceImpl } from './service.ts'
import type { SessionStore } from './store.ts'
import type { Integrity, RepairReport, Session, SessionService } from './types.ts'

export * from './records.ts'
export * from './types.ts'
export type { Appender, AppenderOptions, CompactedIndex, LogSnapshot, NewestSessions, SessionStore, StoreWriter, StoredSegment, SummaryIndexStore } from './store.ts'
export type { LogChunk } from './log-reader.ts'
export { parseSegmentIndex, type SegmentEntry, splitMac } from './integrity.ts'
export { WriteBehind } from './write-behind.ts'
export { defaultSessionsDir, LEGACY_DIR, projectRoot, sessionsRoot, stateHome, workspaceKey } from './location.ts'
export { isSessionId } from './ids.ts'
export { foldHeld, foldSession, type HeldFold, SUMMARY_PART, type SummaryPart, titleOf } from './summary.ts'
export { type HeldRecords, nextSeqOf, recordsSince } from './held.ts'

declare module 'cordis' {
  interface Context {
    /** Session logs: create, open, list, fork, flush (section 3). */
    sessions: SessionService
    /** Where the logs are kept, provided by a store plugin (`@goalkeeper/session-jsonl`, `@goalkeeper/session-postgres`). */
    sessionStore: SessionStore
  }
  interface Events {
    /** Isolated, after each append. */
    'session/event'(session: Session, record: SessionRecord): void
    /** Parallel: a flush of the session was asked for. */
    'session/flush'(session: Session): void | Promise<void>
    /**
     * Isolated: the log before the checkpoint a session was opened for writing from, verified in the
     * background, does not verify; `integrity` names the first line that does not (as a whole read would).
     */
    'session/tampered'(session: Session, integrity: Integrity): void
    /** A session opened for writing needed repair (torn line cut, repair records appended). */
    'session/repaired'(session: Session, report: RepairReport): void
  }
}

export const name = 'session'
// The store comes from a store plugin loaded before this one: the composition chooses it.
export const inject = ['sessionStore']

export const Config = Schema.object({
  flushDelayMs: Schema.natural().default(5).description('Longest wait before appended records are written (without fsync) in one batch.'),
  maxBatchBytes: Schema.natural().default(1 << 20).description('Queued size that starts a write at once instead of waiting for flushDelayMs.'),
  maxSessionBytes: Schema.natural().min(1 << 16).default(256 * 2 ** 20).description('What one process may hold of a session log: the bytes it read at open (from the last checkpoint, or all) plus those it appended. Once reached, one session/full record says so, later records are kept in memory only and every flush fails with SESSION_FULL (the CLI exits 74); opening again reads from the last checkpoint.'),
  maxOpenBytes: Schema.natural().min(1 << 16).default(512 * 2 ** 20).description('What an open may read of a session log: the part from the last checkpoint, or the whole log without one; more is refused (SESSION_TOO_LARGE, naming the size) instead of read, since an open session holds what it read in memory.'),
  checkpointEvery: Schema.natural().default(10_000).description('A checkpoint (session/checkpoint: what a reader needs to continue from there) is written at the end of the first turn after this many records since the last one, and after every compaction; 0: at compactions only.'),
  logVersion: Schema.union([1, 2]).default(2).description('Log format of sessions created from now on: 2 signs each batch of lines written together with one mac (cheaper to write and to read; tampering is located to the batch), 1 signs every line. Logs of either version are read and appended in their own format.'),
  keyFile: Schema.string().default('').description('File of the key that signs session records; empty: $XDG_CONFIG_HOME/goalkeeper/session.key (~/.config), created with 0600 on first use.'),
  key: Schema.string().role('secret').default('').description('The key that signs session records, 64 hex digits, normally ${GOALKEEPER_SESSION_KEY} (openssl rand -hex 32); it replaces keyFile. Every machine that writes or reads the same database needs the same key.'),
  maskSecrets: Schema.boolean().default(true).description('Mask the values of secret environment variables (and their JSON, URL, hex and base64 forms) in everything recorded.'),
  clock: Schema.function().hidden().description('Time source in epoch ms, for tests and embedding (default Date.now).'),
})
export type Config = Schemastery.TypeT<typeof Config>

export const apply = (ctx: Context, config: Config) => {
  const key = config.key ? parseKey(config.key) : undefined
  const store = ctx.sessionStore
  // A key made on first use is one machine's: every other machine would see its sessions as tampered.
  if (store.shared && !(key || config.keyFile)) throw Object.assign(new Error('database is set but no shared signing key: set key: ${GOALKEEPER_SESSION_KEY} in the session entry and GOALKEEPER_SESSION_KEY to the same 64 hex digits (openssl rand -hex 32) on every machine that uses this database, or point keyFile at a key file they share'), { code: 'SESSION_KEY_MISSING' })
  const keyFile = config.keyFile ? path.resolve(config.keyFile) : defaultKeyFile()
  // The secrets of this process's environment, labelled as the CLI does, and the held ones: the masker is
  // made again when those change, since the signing key is loaded only on first use.
  const masker = config.maskSecrets ? liveMasker({ shapes: false, label: redactedLabel }) : undefined
  const mask = masker ? <T>(data: T) => (masker.secrets.length ? maskDeep(data, masker) : data) : undefined
  const service = new SessionServiceImpl(ctx, { ...config, keyFile, key, mask, clock: config.clock as (() => number) | undefined, store })
  // Yielded in this order so that teardown first withdraws the service (waiting for its dependents),
  // then flushes and closes every session, then lets go of the store (which its plugin may then close).
  ctx.effect(function* () {
    yield store.retain?.() ?? (() => {})
    yield () => service.dispose()
    yield ctx.provide('sessions', service)
  }, 'sessions')
}

function parseKey(text: string): Buffer {
  // Never quote the value: it is a secret.
  if (!/^[0-9a-f]{64}$/i.test(text.trim())) throw Object.assign(new Error(`key of the session plugin is not a session key: it must be 64 hex digits (make one with: openssl rand -hex 32)`), { code: 'SESSION_KEY_INVALID' })
  return Buffer.from(text.trim(), 'hex')
}

export { compactionLine } from './compaction-text.ts'
