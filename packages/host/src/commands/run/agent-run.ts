import type { Agent, AgentService } from '@goalkeeper/agent-loop'
import { describeGoalStatus, type GoalService, type GoalState } from '@goalkeeper/goal'
import type {} from '@goalkeeper/project-instructions'
import { lastAssistantText, nextSeqOf, recordsSince, turnOutcome, type SessionRecord, type SessionService, type TurnOutcome, type Usage } from '@goalkeeper/session'
import type { App } from '../../app.ts'
import type { CommandContext } from '../../command.ts'
import { describeError } from '@goalkeeper/kit'
import { asHostError, HostError } from '../../errors.ts'
import { ExitCode } from '../../exit-codes.ts'
import { assertSessions } from '../lookup/database.ts'
import { assertComposition, assertServices } from '../lookup/services.ts'
import { lastSessionId, resolveSessionId } from '../lookup/session-id.ts'
import { assertPermissions, permissionsHeader } from '../lookup/permissions.ts'
import { chooseModel, type ModelChoice } from './model-choice.ts'
import { cliCommand } from '../render/hints.ts'
import { keepEnd, oneLine } from '../render/text.ts'
import { callsOf, usageOfCalls } from '../render/usage.ts'
import { describeInterrupt, interruptWork } from './interrupt.ts'
import { LiveView, showReloads } from './live-view.ts'
import { describeModel } from './model-note.ts'
import { Terminal } from './terminal.ts'
import { writeLastMessage } from './last-message.ts'
import type { AnswerSchema } from './output-schema.ts'

export interface AgentRunOptions {
  /** Id (or unambiguous part) of a saved session to continue; a new session otherwise. */
  session?: string
  /** What the command is called in error messages. */
  purpose: string
  /** `--database`: the PostgreSQL URL the session entry keeps sessions in. */
  database?: string
  /** The command drives a goal: ctx.goals and the round driver must be loaded. */
  goals?: boolean
  /** `--last`: continue the most recent session of the workspace. */
  last?: boolean
  /** Asks the person which saved session to continue (`chat --resume` on a terminal): its full id. */
  pick?: (sessions: SessionService) => Promise<string>
  /** Every SIGINT (not only the first) stops running work when there is some (chat). */
  repeatInterrupts?: boolean
  /** A person at a terminal answers permission questions (chat); otherwise calls outside the mode are denied. */
  attended?: boolean
  /** `--max-steps`: model calls allowed in one turn, over the agent-loop's `maxSteps`. */
  maxSteps?: number
  /** `--accept-truncation`: the person accepts that the session's cut-off end is lost (it is recorded, then resumed). */
  acceptTruncation?: boolean
  /** `--output-last-message`: the file (absolute, already found writable) that gets the final answer. */
  lastMessageFile?: string
  /** `--output-schema`: the schema the agent's model calls ask for and its final answer is checked against. */
  answerSchema?: AnswerSchema
}

export type RestState = 'rest' | 'gone'

/** Why the session could not be saved, as `--json` carries it. */
export interface SaveFailure {
  /** A file-system code (`ENOSPC`, `EFBIG`, `EIO`, ...) or `SESSION_LOST` (the file was removed or replaced). */
  code: string
  message: string
  /** Records not saved. */
  unsaved: number
  /** With `SESSION_LOST`: `removed` (nothing of the session is left to read), `replaced`, `truncated` or `taken`. */
  reason?: string
}

/**
 * One agent command's run: the composition, one agent on a new or resumed session, the live view of its
 * work, Ctrl-C handling, and the wait until it is at rest. Created with `AgentRun.open`.
 */
export class AgentRun {
  /** Seq of the first record of this command's (or of the agent it switched to); its own output is what follows. */
  private startSeq: number
  /**
   * The usage of this command's model calls, taken as they are recorded: a long goal's session lets go of
   * its records before each checkpoint, and the totals printed at the end count them all.
   */
  private spent: Usage[] = []
  /** Seq of the next record whose usage `spent` has not taken yet. */
  private counted = 0
  private stopCounting: () => void
  private interruptedOnce = false
  private saveFailure?: SaveFailure
  private stopInterrupts: () => void
  private stopReloads: () => void
  private keepAlive: NodeJS.Timeout
  /** `--output-last-message`: where `finish` writes the final answer. */
  private lastMessageFile?: string
  /** `--output-schema`, checked by `reportResult`. */
  answerSchema?: AnswerSchema

  private constructor(
    readonly cli: CommandContext,
    readonly app: App,
    readonly term: Terminal,
    private current: Agent,
    private view: LiveView,
    public resumed: boolean,
    private repeatInterrupts: boolean,
  ) {
    this.startSeq = this.counted = resumed ? nextSeqOf(current.session) : 0
    this.stopCounting = app.ctx.on('session/event', (session) => {
      if (session.id === this.current.id) this.count()
    })
    this.stopInterrupts = app.onInterrupt(() => this.interrupt())
    this.stopReloads = showReloads(app, term)
    // A model call may wait on something that holds no handle (a scripted hang, a stalled provider);
    // without this timer Node would end the process mid-turn (exit 13) instead of waiting for it or a Ctrl-C.
    this.keepAlive = setInterval(() => {}, 1 << 30)
    void app.closed.then(() => clearInterval(this.keepAlive))
  }

  static async open(cli: CommandContext, options: AgentRunOptions): Promise<AgentRun> {
    const term = new Terminal(cli.io, cli.globals.json)
    const app = await cli.startApp({ reportsFailedEntries: true, ...(options.database !== undefined && { database: options.database }) })
    assertComposition(app, cli.globals)
    if (options.database !== undefined) assertSessions(app, cli.globals, options.purpose, options.database)
    assertServices(app, cli.globals, options.goals ? ['sessions', 'agents', 'goals'] : ['sessions', 'agents'], options.purpose)
    assertPermissions(app, cli.globals)
    if (options.goals && !app.ctx.get('goalDriver')) {
      throw new HostError(`${options.purpose} needs the goal round driver (@goalkeeper/goal-session), which ${app.report.file} does not load`, {
        hint: 'add an entry `name: \'@goalkeeper/goal-session\'` to cordis.yml',
      })
    }
    // One run's switch, on the plugin's service: the composition itself stays as the file says.
    const instructions = app.ctx.get('projectInstructions')
    if (instructions && cli.globals.projectInstructions === false) instructions.enabled = false
    // Listening starts before the agent exists, so that --json shows the new session's header too.
    const view = new LiveView(app.ctx, term, { showReasoning: cli.globals.showReasoning })
    let agent: Agent
    let choice: ModelChoice | undefined
    let id: string | undefined
    try {
      choice = chooseModel(app, cli.globals)
      const picked = {
        ...(choice && cli.globals.model !== undefined ? { model: choice.model, ...(choice.modelId ? { modelId: choice.modelId } : {}) } : {}),
        ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
        ...(options.answerSchema ? { outputSchema: options.answerSchema.request } : {}),
      }
      const sessions = app.ctx.get('sessions')!
      id = options.last ? await lastSessionId(sessions, cli.globals)
        : options.session ? await resolveSessionId(sessions, options.session, cli.globals)
          : await options.pick?.(sessions)
      // Accepting a cut is its own write (a session/truncated record, a new seal) before the agent resumes.
      if (id && options.acceptTruncation) await sessions.close(await sessions.open(id, { acceptTruncation: true }))
      agent = id
        ? await app.ctx.get('agents')!.resume(id, picked)
        : await app.ctx.get('agents')!.create({ cwd: cli.globals.cwd, ...picked })
    } catch (error) {
      view.dispose()
      const failure = asHostError(error)
      if (id && failure instanceof HostError) failure.session = id
      throw failure
    }
    const resumed = !!id
    view.follow(agent, resumed)
    const work = new AgentRun(cli, app, term, agent, view, resumed, !!options.repeatInterrupts)
    work.lastMessageFile = options.lastMessageFile
    work.answerSchema = options.answerSchema
    work.introduce(!!options.attended, choice?.model === agent.model ? choice.line : undefined)
    return work
  }

  /** The agent this command drives: the one it opened, or the one chat switched to last. */
  get agent(): Agent {
    return this.current
  }

  /**
   * Continues on another agent (chat's /model, /clear, /resume): `open` makes it once the current one, idle, is
   * saved and disposed (so that it may reopen the same session). If `open` fails, the previous session is
   * opened again and the error is thrown.
   */
  async switchAgent(open: (agents: AgentService) => Promise<Agent>, resumed: boolean): Promise<void> {
    const agents = this.app.ctx.get('agents')!
    const previous = this.current
    await previous.whenIdle()
    await this.checkSaved()
    await previous.dispose()
    let next: Agent
    try {
      next = await open(agents)
    } catch (error) {
      next = await agents.resume(previous.id, { model: previous.model })
      this.adopt(next, true)
      throw asHostError(error)
    }
    this.adopt(next, resumed)
  }

  private adopt(agent: Agent, resumed: boolean) {
    this.current = agent
    this.resumed = resumed
    this.startSeq = this.counted = resumed ? nextSeqOf(agent.session) : 0
    this.spent = []
    this.view.follow(agent, resumed)
  }

  get goals(): GoalService | undefined {
    return this.app.ctx.get('goals')
  }

  /** The session's goal; undefined when there is none, no goal plugin, or its log is corrupt (then noted). */
  goal(): GoalState | undefined {
    const health = this.goals?.health(this.agent)
    if (health && !health.ok) this.term.note(`cannot read the goal: ${describeError(health.error)}`)
    return this.goals?.get(this.agent)
  }

  /**
   * Resolves once the work is over: the round driver says the goal's rounds stopped (`whenSettled`; without a
   * driver nothing runs rounds, so the agent being idle is enough) and no automatic resume waits for a usage
   * limit to reset; `gone` when the agent or the app goes away first.
   */
  async untilRest(): Promise<RestState> {
    const gone = this.app.closed.then(() => 'gone' as const)
    while (!this.agent.disposed) {
      const driver = this.app.ctx.get('goalDriver')
      const settled = driver ? driver.whenSettled(this.agent) : this.agent.whenIdle()
      if (await Promise.race([settled.then(() => 'settled' as const), gone]) === 'gone' || this.agent.disposed) return 'gone'
      // An automatic resume is waiting for a usage limit to reset: the goal is not done yet.
      if (!this.app.ctx.get('goalAutoResume')?.pending(this.agent)) return 'rest'
      if (await Promise.race([this.nextGoalMove(), gone]) === 'gone') return 'gone'
    }
    return 'gone'
  }

  /** The next thing that ends a waiting automatic resume: the resume itself, a goal change, input, or the agent going away. */
  private nextGoalMove(): Promise<'moved'> {
    return new Promise((resolve) => {
      const { ctx } = this.app
      const mine = (agent: { id: string }) => agent.id === this.agent.id
      const done = () => {
        for (const stop of stops) stop()
        resolve('moved')
      }
      const stops = [
        ctx.on('goal/auto-resume', (agent) => mine(agent) && done()),
        ctx.on('goal/activation', (agent) => mine(agent) && done()),
        ctx.on('goal/changed', (agent) => mine(agent) && done()),
        ctx.on('agent/queued', (agent) => mine(agent) && done()),
        ctx.on('agent/disposed', (agent) => mine(agent) && done()),
      ]
    })
  }

  /** This command's records (for a resumed session, those appended after it was opened). */
  records(): readonly SessionRecord[] {
    return recordsSince(this.agent.session, this.startSeq)
  }

  /** The usage reported by each model call of this command, all of them (its records may be let go of). */
  calls(): readonly Usage[] {
    this.count()
    return this.spent
  }

  private count() {
    const { session } = this.current
    for (const usage of callsOf(recordsSince(session, this.counted))) this.spent.push(usage)
    this.counted = nextSeqOf(session)
  }

  /** The last assistant text of this command's turns: the final answer. */
  answer(): string | undefined {
    return lastAssistantText(this.records())
  }

  /** How this command's last turn ended, if it ran one. */
  lastOutcome(): TurnOutcome | undefined {
    return turnOutcome(this.records())
  }

  /** How the agent's model calls are priced (undefined without the goal-budget plugin). */
  price() {
    return this.view.price(this.agent)
  }

  get goalChanged(): boolean {
    return this.view.goalChanged
  }

  /**
   * Makes every record durable; if that fails, says so (why, and what was kept) and remembers it, so
   * that `finish` exits with NOT_SAVED. Never claims a save it could not verify.
   */
  async checkSaved(): Promise<SaveFailure | undefined> {
    try {
      await this.app.ctx.get('sessions')!.flush(this.agent.session)
      return undefined
    } catch (error) {
      const { code, unsaved, reason } = error as { code?: unknown; unsaved?: unknown; reason?: unknown }
      this.saveFailure = { code: typeof code === 'string' ? code : 'EIO', message: describeError(error), unsaved: typeof unsaved === 'number' ? unsaved : 0, ...(typeof reason === 'string' && { reason }) }
      this.term.note(`the session could not be saved: ${this.saveFailure.message}`)
      return this.saveFailure
    }
  }

  /** Ends the run: stops listening, prints the JSON result line, returns the exit code (NOT_SAVED after a failed save). */
  finish(exitCode: number, extra: Record<string, unknown> = {}): number {
    if (this.saveFailure) {
      exitCode = ExitCode.NOT_SAVED
      extra = { ...extra, saveError: this.saveFailure }
    }
    clearInterval(this.keepAlive)
    this.stopCounting()
    this.stopInterrupts()
    this.stopReloads()
    this.view.dispose()
    // A second Ctrl-C during the ordered shutdown that follows exits with the same code.
    if (this.app.signals) this.app.signals.exitCode = exitCode
    const goal = this.goal()
    const usage = usageOfCalls(this.calls())
    const unwritten = this.lastMessageFile === undefined ? undefined : writeLastMessage(this.lastMessageFile, this.answer())
    if (unwritten) {
      this.term.note(`could not write the answer to ${this.lastMessageFile}: ${unwritten}`)
      if (exitCode === ExitCode.OK) exitCode = ExitCode.RUNTIME
      if (this.app.signals) this.app.signals.exitCode = exitCode
    }
    this.term.record({ type: 'result', session: this.agent.id, exitCode, outcome: this.lastOutcome() ?? null, answer: this.answer() ?? null, goal: goal ?? null, goalStatus: goal ? describeGoalStatus(goal) : null, usage: usage ?? null, ...extra })
    return exitCode
  }

  /** A hint line with an exact command: `to continue: goalkeeper goal --session ID`. */
  hint(text: string, ...words: string[]): void {
    // A command to copy: a cut or a line break would break it.
    this.term.note(`${text}: ${cliCommand(this.cli.globals, ...words)}`, 'whole')
  }

  /**
   * A SIGINT stops the running work; with nothing running (or after the first one, unless interrupts
   * repeat) it is left to the ordered shutdown. Returns whether it was handled here.
   */
  interrupt(): boolean {
    if (this.interruptedOnce && !this.repeatInterrupts) return false
    const action = interruptWork(this.agent, this.goals)
    if (!action) return false
    this.interruptedOnce = true
    if (this.app.signals && !this.repeatInterrupts) this.app.signals.exitCode = ExitCode.PAUSED
    this.term.note(`${describeInterrupt(action)}${this.repeatInterrupts ? '' : ' (Ctrl-C again to shut down)'}`)
    return true
  }

  private introduce(attended: boolean, modelLine: string | undefined) {
    const { agent, term } = this
    // The id is whole; a path too long for the width keeps its end.
    const withPath = (before: string, path: string, after = '') =>
      keepEnd(before, path, after, term.width, 'goalkeeper: ')
    const { config, configSource } = this.cli.globals
    term.note(withPath(`session ${agent.id} (${this.resumed ? 'resumed' : 'new'}) in `, agent.session.header.cwd))
    if (configSource === 'built-in') term.note(withPath('no cordis.yml here: the default composition (', config, ')'))
    if (configSource === 'user') term.note(withPath("no cordis.yml here: the user's composition (", config, ')'))
    term.note(modelLine ?? describeModel(this.app.ctx.get('models'), agent.model))
    term.note(permissionsHeader(this.app, attended))
    const repair = agent.session.repair
    if (repair) {
      const torn = repair.tornBytes ? `cut a torn last line (${repair.tornBytes} bytes, kept in ${repair.sideFile}), ` : ''
      term.note(`the session was repaired after a crash: ${torn}${repair.appended.length} repair records appended`)
    }
    if (!this.resumed) return
    if (agent.queued.length) term.note(`${agent.queued.length} unanswered input${agent.queued.length === 1 ? '' : 's'} restored from the session`)
    const goal = this.goal()
    if (goal && goal.phase !== 'complete') {
      term.note(`the session has a goal, loaded disarmed (${goal.phase}, ${goal.roundsStarted}/${goal.maxGoalRounds} rounds): ${JSON.stringify(oneLine(goal.objective, 80))}`)
    }
  }
}
