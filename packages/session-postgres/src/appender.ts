import type pg from 'pg'
import { type AppenderOptions, WriteBehind } from '@goalkeeper/session'
import type { Lease } from './lease.ts'
import { lineFacts, type TitleScan } from './summary.ts'

interface Line {
  seq: number
  offset: number
  text: string
}

/**
 * One statement per batch, committed on its own (autocommit), so a batch is one round trip and one
 * transaction: check the lease, insert the lines, update the session's summary row. A writer whose lease
 * was taken inserts nothing: the insert is conditional on the lease check in the same statement, and the
 * check's row lock (FOR SHARE) makes a taker wait for this batch to commit, after which it sees the lease
 * as this batch left it. Renewal runs in the background (lease.ts), so a batch writes no lease row.
 * Prepared once per connection (named), as it runs for every batch of every session.
 */
const BATCH = {
  name: 'goalkeeper-session-batch',
  text: `
  WITH lease AS (
    SELECT 1 FROM goalkeeper_session_leases WHERE session_id = $1 AND token = $2 FOR SHARE
  ), inserted AS (
    -- The lines travel as one text (a JSON line holds no raw newline): far cheaper to send and to split
    -- than a text[] parameter, whose every quote would be escaped. Seqs and offsets follow from the first.
    INSERT INTO goalkeeper_session_records (session_id, seq, byte_offset, line)
    SELECT $1, $3::int + r.n::int - 1, $4::bigint + sum(octet_length(r.line) + 1) OVER (ORDER BY r.n) - octet_length(r.line) - 1, r.line
    FROM unnest(string_to_array($5::text, E'\n')) WITH ORDINALITY AS r (line, n)
    WHERE $5::text <> '' AND EXISTS (SELECT FROM lease)
    -- Only a retry of a batch whose commit was not acknowledged finds its rows there: they are its own.
    ON CONFLICT (session_id, seq) DO NOTHING
    RETURNING 1
  ), summary AS (
    UPDATE goalkeeper_sessions SET records = GREATEST(records, $6), bytes = GREATEST(bytes, $7),
      updated_at = COALESCE($8, updated_at), title = COALESCE(title, $9), seal = COALESCE($10, seal)
    WHERE id = $1 AND $5::text <> '' AND EXISTS (SELECT FROM lease)
    RETURNING 1
  )
  SELECT EXISTS (SELECT FROM lease) AS held`,
}

/** Write-behind appender of one session's lines into PostgreSQL; the counterpart of the JSONL writer. */
export class PgAppender extends WriteBehind {
  private queue: Line[] = []
  private retry: Line[] = []
  private size: number
  /** The line that carries the mac the chain is at after the lines taken so far (the last, or a batch's first). */
  private sealLine?: string

  constructor(private pool: pg.Pool, private lease: Lease, size: number, lastSeq: number, private title: TitleScan, options: AppenderOptions) {
    super(lastSeq, options)
    this.size = size
  }

  get lostError(): Error | undefined {
    return this.lease.lost
  }

  protected enqueue(line: string, seq: number): void {
    // Lines come with their newline; rows hold the line alone, at its offset in the JSONL form (given when
    // taken, once a batched log's lines are signed).
    this.queue.push({ seq, offset: 0, text: line.endsWith('\n') ? line.slice(0, -1) : line })
  }

  /** Signs (batched logs) and places the lines queued since the last take; the retry's are already. */
  private take(): Line[] {
    const queue = this.queue
    const batches = this.options.batches
    if (batches && queue.length) {
      const signed = batches.sign(queue.map((line) => line.text), queue[0].seq, this.size)
      for (let i = 0; i < queue.length; i++) queue[i].text = signed[i]
      this.sealLine = batches.lastHead
    } else if (queue.length) this.sealLine = queue[queue.length - 1].text
    for (const line of queue) {
      line.offset = this.size
      this.size += Buffer.byteLength(line.text) + 1
    }
    return queue
  }

  protected hasQueued(): boolean {
    return this.queue.length > 0 || this.retry.length > 0
  }

  /** Every write is a commit, so a flush is the next write, background or not. */
  protected async runCycle(): Promise<void> {
    if (this.lease.lost) throw this.lease.lost
    const taken = this.take()
    const batch = this.retry.length ? this.retry.concat(taken) : taken
    const sealLine = this.sealLine
    this.retry = []
    this.queue = []
    this.queuedChars = 0
    const last = batch[batch.length - 1]
    const facts = lineFacts(batch.map((line) => line.text), this.title)
    let held: boolean
    try {
      const { rows } = await this.pool.query({ ...BATCH, values: [
        this.lease.id, this.lease.token,
        batch[0]?.seq ?? 0, batch[0]?.offset ?? 0, batch.map((line) => line.text).join('\n'),
        last ? last.seq + 1 : 0, last ? last.offset + Buffer.byteLength(last.text) + 1 : 0, facts.updatedAt ?? null, facts.title ?? null,
        // Committed with the lines it names: the seal is never ahead of the log, nor behind it.
        (last && sealLine !== undefined && this.options.seal?.(last.seq, sealLine)) ?? null,
      ] })
      held = rows[0].held
    } catch (error) {
      // Not known to be written: the same lines (same seqs) go again with the next write.
      this.retry = batch
      throw error
    }
    if (!held) {
      this.retry = batch
      throw this.lease.taken()
    }
    if (facts.title !== undefined) this.title.found = true
    this.durable(last?.seq ?? this.durableSeq)
  }
}
