import type { Context } from 'cordis'
import type { BuiltinPlugins, LoadReport } from '@goalkeeper/loader'

/** A goal's composition as the starter hands it back (the CLI's `App` is one). */
export interface GoalApp {
  ctx: Context
  report: LoadReport
  /** Ordered shutdown of the composition. */
  shutdown(): Promise<void>
}

/** What the program around the worker hands the runner: how to compose, and where to say what happens. */
export interface GoalRunnerOptions {
  /** Loads a cordis.yml with `cwd` as its base directory (the CLI's starter: its log level, stderr and environment). */
  startApp(options: { config: string; cwd: string; builtins: BuiltinPlugins }): Promise<GoalApp>
  /** The plugins the composition's entries resolve to by name (the CLI's table). */
  builtins: BuiltinPlugins
  /** The worker's own cordis.yml: it composes goals whose clone has none. */
  config: string
  /** The variable that hands the worker's database to the composition; absent when the worker has none. */
  databaseVariable?: string
  /** One progress line for the person running the worker. */
  note(line: string): void
}
