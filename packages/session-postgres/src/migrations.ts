import type pg from 'pg'
import { underSetupLock } from './setup.ts'

/**
 * The schema, one version per entry, applied in order and recorded in `goalkeeper_migrations`. Never edit
 * an entry that has shipped: add the next version.
 */
export const MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'sessions, records, leases, cut tails',
    sql: `
      -- One row per session: what \`sessions\` lists, kept up to date in the transaction of every batch.
      CREATE TABLE goalkeeper_sessions (
        id text PRIMARY KEY,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        records integer NOT NULL,
        bytes bigint NOT NULL,
        title text,
        cwd text NOT NULL,
        parent_id text,
        parent_seq integer
      );
      -- The log: one row per record line (signed, without its newline), at its byte offset in the JSONL form.
      CREATE TABLE goalkeeper_session_records (
        session_id text NOT NULL REFERENCES goalkeeper_sessions (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        byte_offset bigint NOT NULL,
        line text NOT NULL,
        PRIMARY KEY (session_id, seq)
      );
      -- One writer per session: the holder renews expires_at; a lease past it may be taken.
      CREATE TABLE goalkeeper_session_leases (
        session_id text PRIMARY KEY,
        holder text NOT NULL,
        token text NOT NULL,
        host text NOT NULL,
        pid integer NOT NULL,
        acquired_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      );
      -- What a repair cut off a log, kept before it was cut (the side files of the file store).
      CREATE TABLE goalkeeper_session_tails (
        session_id text NOT NULL,
        size bigint NOT NULL,
        bytes bytea NOT NULL,
        cut_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (session_id, size)
      );
    `,
  },
  {
    version: 2,
    name: 'log versions, kept listing summaries',
    sql: `
      -- A session's version: every change to its records (a batch, a cut, or a hand edit, which the
      -- listing must not miss) draws the next value, so a token never repeats, not even for a session
      -- removed and created again under the same id. The listing's kept summaries are bound to it.
      CREATE SEQUENCE goalkeeper_session_versions;
      ALTER TABLE goalkeeper_sessions ADD COLUMN version bigint NOT NULL DEFAULT nextval('goalkeeper_session_versions');
      CREATE FUNCTION goalkeeper_session_changed() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        UPDATE goalkeeper_sessions SET version = nextval('goalkeeper_session_versions') WHERE id IN (SELECT DISTINCT session_id FROM changed);
        RETURN NULL;
      END
      $fn$;
      -- Once per statement (a batch is one statement), not per row; a trigger with a transition table takes one event.
      CREATE TRIGGER goalkeeper_session_records_inserted AFTER INSERT ON goalkeeper_session_records
        REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION goalkeeper_session_changed();
      CREATE TRIGGER goalkeeper_session_records_updated AFTER UPDATE ON goalkeeper_session_records
        REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION goalkeeper_session_changed();
      CREATE TRIGGER goalkeeper_session_records_deleted AFTER DELETE ON goalkeeper_session_records
        REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION goalkeeper_session_changed();
      -- The listing summary the session service signed for each log (opaque here; verified before use).
      -- A table of its own: writing it never locks a session row that batches update.
      CREATE TABLE goalkeeper_session_summaries (
        session_id text PRIMARY KEY REFERENCES goalkeeper_sessions (id) ON DELETE CASCADE,
        summary text NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'session seals',
    sql: `
      -- The signed seal of each log (the last durable record's seq and mac), written by the batch that
      -- made it durable: deleting rows of the log does not delete it, so a cut tail shows at the next open.
      ALTER TABLE goalkeeper_sessions ADD COLUMN seal text;
    `,
  },
  {
    version: 4,
    name: 'checkpoint indexes, most recent sessions',
    sql: `
      -- Where each log's last checkpoint starts (text the service signs): a writable open reads from there.
      ALTER TABLE goalkeeper_sessions ADD COLUMN checkpoint_index text;
      -- "The N most recent sessions": newest activity first, ties by id in byte order (as listings sort).
      CREATE INDEX goalkeeper_sessions_recent ON goalkeeper_sessions (updated_at DESC, id COLLATE "C" DESC);
    `,
  },
]

/**
 * Brings the schema to the latest version. Concurrent starters queue on goalkeeper's set-up lock, so each
 * version is applied once; each version is applied in its own transaction with its record.
 */
export async function migrate(pool: pg.Pool): Promise<number[]> {
  const applied: number[] = []
  await underSetupLock(pool, async (client) => {
    await client.query(`CREATE TABLE IF NOT EXISTS goalkeeper_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
    const { rows } = await client.query<{ version: number }>('SELECT version FROM goalkeeper_migrations')
    const done = new Set(rows.map((row) => row.version))
    const latest = Math.max(0, ...done)
    const known = MIGRATIONS[MIGRATIONS.length - 1].version
    if (latest > known) throw Object.assign(new Error(`the database's session schema is version ${latest}, newer than this goalkeeper knows (${known}): upgrade goalkeeper`), { code: 'SESSION_SCHEMA' })
    for (const migration of MIGRATIONS) {
      if (done.has(migration.version)) continue
      await client.query('BEGIN')
      try {
        await client.query(migration.sql)
        await client.query('INSERT INTO goalkeeper_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name])
        await client.query('COMMIT')
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        throw error
      }
      applied.push(migration.version)
    }
  })
  return applied
}
