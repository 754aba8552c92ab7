import Schema from 'schemastery'

/** How the git workspaces of goals are cloned, committed and pushed. */
export const GitConfig = Schema.object({
  root: Schema.string().default('').description('Directory of the private workspaces (one per running goal); empty: <tmp>/goalkeeper-workspaces.'),
  remote: Schema.string().default('').description('Where goal branches are pushed; empty: the repository the job names. A URL or a local path.'),
  username: Schema.string().default('').description('User for an HTTPS push target; write it as ${VAR}.'),
  password: Schema.string().default('').role('secret').description('Password or token for the push target; write it as ${VAR}: it is handed to git through GIT_ASKPASS, never on a command line, and masked in every log and record.'),
  branch: Schema.string().default('goalkeeper/{session}').description('Name of a goal\'s branch; {session} is the session id, {job} the job id.'),
  authorName: Schema.string().default('goalkeeper').description('Author and committer name of round commits.'),
  authorEmail: Schema.string().default('goalkeeper@localhost').description('Author and committer email of round commits.'),
  timeoutMs: Schema.natural().default(120_000).description('Longest a git command may run before it is killed (a clone of an unreachable host fails instead of hanging).'),
})

export const Config = Schema.object({
  database: Schema.string().default('').description('PostgreSQL URL of the queue (the sessions\' database); empty: the command\'s --database or DATABASE_URL.'),
  queue: Schema.string().default('goalkeeper-goals').description('pg-boss queue name.'),
  schema: Schema.string().default('pgboss').description('PostgreSQL schema of pg-boss\'s tables.'),
  expireSeconds: Schema.natural().min(1).default(60).description('A running job whose worker stopped heartbeating this long is expired by pg-boss and retried by another worker.'),
  heartbeatSeconds: Schema.number().min(0.1).default(5).description('How often a worker beats (its row in goalkeeper_fleet_workers) and renews the jobs it runs; keep it well under lostSeconds.'),
  lostSeconds: Schema.number().min(0.1).default(20).description('A worker whose beat stopped this long is lost: a live worker releases its running jobs for another to take, and `queue` shows it as lost.'),
  maintenanceSeconds: Schema.natural().min(1).default(10).description('How often pg-boss looks for expired jobs.'),
  pollMs: Schema.natural().min(10).default(2000).description('How often an idle worker asks the queue for a job.'),
  retryLimit: Schema.natural().default(20).description('Attempts after the first (an expired or returned job counts one).'),
  retryDelaySeconds: Schema.natural().default(5).description('Wait before an expired or failed job may run again (a session still leased by a live writer is not hammered).'),
  git: GitConfig,
})

export type Config = Schemastery.TypeT<typeof Config>
export type GitConfig = Schemastery.TypeT<typeof GitConfig>
