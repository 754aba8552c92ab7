import { clearLine, createInterface, cursorTo, type Interface } from 'node:readline'
import type { Context } from 'cordis'
import { executeGoalCommand, parseGoalCommand } from '@goalkeeper/tool-goal'
import type { Agent } from '@goalkeeper/agent-loop'
import { compactionLine, lastAssistantText, projectRoot, type SessionService } from '@goalkeeper/session'
import { describeSpend, isRunnable } from '@goalkeeper/goal'
import { type CommandContext, defineCommand } from '../../command.ts'
import { describeError } from '@goalkeeper/kit'
import { HostError } from '../../errors.ts'
import { ExitCode } from '../../exit-codes.ts'
import { EXIT_CODE_HELP, goalExitCode, turnExitCode } from '../render/outcome.ts'
import { AgentRun } from '../run/agent-run.ts'
import { withMaxSteps, type MaxStepsOptions } from '../run/goal-options.ts'
import { describeInterrupt, interruptWork } from '../run/interrupt.ts'
import { untilAnswered } from './answered.ts'
import { PermissionQuestions } from './permission-question.ts'
import { PromptOutput } from './prompt-output.ts'
import { chatHelp } from './help.ts'
import { chooseModel } from '../run/model-choice.ts'
import { describeModel } from '../run/model-note.ts'
import { lastSessionId, resolveSessionId } from '../lookup/session-id.ts'
import { changesLine, changesOf } from '../render/session-changes.ts'
import { costOfHeld, type HeldTotals, heldTotals, usageTotalsOf } from '../render/totals.ts'
import { describeCost, describeUsage } from '../render/usage.ts'
import { formatTime, oneLine, table } from '../render/text.ts'
import { cliCommand } from '../render/hints.ts'
import { pickSession, recentWithGoals } from './session-picker.ts'
import type { PickerTerminal } from './picker.ts'

const HELP = chatHelp()

/** Said when a session's totals start past its first record: it was opened from a checkpoint written before checkpoints carried them. */
const partialNote = (from: number) => `(counted from record ${from}: the checkpoint there was written before checkpoints carried the session's totals)`

export interface ChatOptions extends MaxStepsOptions {
  session?: string
  last?: boolean
  continue?: boolean
  resume?: string | boolean
}

export default defineCommand<ChatOptions>({
  name: 'chat',
  description: 'talk with the agent in a session; /goal commands set and steer the session goal',
  configure: (command) =>
    withMaxSteps(command)
      .option('--session <id>', 'continue a saved session (id, or an unambiguous part of it)')
      .option('--last', 'continue the most recent session of this project')
      .option('--continue', 'the same as --last')
      .option('--resume [id]', 'continue a saved session: the id, or on a terminal none to pick one of the recent sessions')
      .addHelpText('after', `
Lines are read from stdin: a terminal gets a prompt, piped input is processed line by line (each message
waits for its answer), and at the end of input chat waits until the agent is idle and the goal has settled.

${HELP}
${EXIT_CODE_HELP}

At the end, chat exits with the code of the session's goal as \`goalkeeper goal\` would (0 without a goal,
unless the last turn failed).`),
  async run(cli, _args, options) {
    const input = cli.io.stdin ?? process.stdin
    // Only a person at a terminal can be asked; piped input and --json are unattended.
    const attended = isTerminal(cli.io, input) && !cli.globals.json
    const last = !!(options.last || options.continue)
    const session = typeof options.resume === 'string' ? options.resume : options.session
    if ([last, options.session !== undefined, options.resume !== undefined].filter(Boolean).length > 1) throw new HostError('--last, --session and --resume each name a session', { hint: 'give one of them' })
    const pick = options.resume === true ? picker(cli, input, attended) : undefined
    const run = await AgentRun.open(cli, { session, last, pick, purpose: 'chat', repeatInterrupts: true, attended, maxSteps: options.maxSteps })
    const chat = new Chat(run, input, attended)
    return chat.talk()
  },
})

/**
 * `chat --resume` without an id: on a terminal, the person picks one of the project's recent sessions
 * (cancelling leaves, exit 0); elsewhere there is nobody to ask, so the id is needed.
 */
function picker(cli: CommandContext, input: NodeJS.ReadableStream & { isTTY?: boolean }, attended: boolean) {
  if (!attended) throw new HostError('chat --resume needs the session id when not on a terminal', { hint: `${cliCommand(cli.globals, 'sessions')} lists them; --last takes the most recent` })
  return async (sessions: SessionService): Promise<string> => {
    const recent = await recentWithGoals(sessions, cli.globals)
    if (!recent.length) throw new HostError(`--resume: no saved session of ${projectRoot(cli.globals.cwd)} in ${sessions.dir}`, { hint: 'chat without --resume starts one' })
    const id = await pickSession({ input, output: cli.io.stdout as PickerTerminal['output'] }, recent)
    if (id === undefined) throw new HostError('no session picked, so none was resumed', { exitCode: ExitCode.OK })
    return id
  }
}

const isTerminal = (io: { stdout: { isTTY?: boolean } }, input: { isTTY?: boolean }) => !!input.isTTY && !!io.stdout.isTTY

class Chat {
  private readonly interactive: boolean
  private readonly rl: Interface
  private readonly stdout: NodeJS.WritableStream
  /** readline writes here; muted while the prompt is not drawn. */
  private readonly output: PromptOutput
  private queue: Promise<void> = Promise.resolve()
  private promptShown = false
  /** False while other output owns the terminal (streamed text mid-line): the prompt waits. */
  private surfaceFree = true
  /** Lines entered while the prompt was not drawn: readline could not echo them, so they are shown with the next prompt. */
  private unechoed: string[] = []
  private closed = false
  /** A Ctrl-C at an empty, idle prompt arms this; a second one leaves. */
  private leaveArmed = false
  /** A context that injects `goals` (what executeGoalCommand reads); follows reloads of the goal plugin. */
  private goalContext: Context | undefined
  /** Permission questions the person answers here (attended chats only). */
  private questions: PermissionQuestions | undefined
  /** The live status while the agent works; it leads the prompt, so the line a person types on shows it. */
  private status: string | undefined
  /** The model id asked for (`--model p/m`, `/model p/m`), kept when /clear or /resume open another session. */
  private modelId: string | undefined

  constructor(private run: AgentRun, private readonly input: NodeJS.ReadableStream & { isTTY?: boolean }, attended: boolean) {
    // A prompt only makes sense when a person both types and reads; anything else is line mode.
    this.interactive = isTerminal(run.cli.io, input)
    this.stdout = run.cli.io.stdout as NodeJS.WritableStream
    this.output = new PromptOutput(this.stdout)
    this.output.muted = true
    this.rl = createInterface({ input, output: this.interactive ? this.output : undefined, terminal: this.interactive, prompt: '> ' })
    if (this.interactive) {
      run.term.surface = {
        hide: () => {
          this.surfaceFree = false
          this.hidePrompt()
        },
        show: () => {
          this.surfaceFree = true
          this.showPrompt()
        },
        status: (text) => {
          this.status = text
          // A permission question owns the prompt until it is answered.
          if (this.questions?.asking) return
          this.rl.setPrompt(this.prompt())
          if (!this.promptShown) return
          this.hidePrompt()
          this.showPrompt()
        },
      }
    }
    if (attended) this.attend()
    this.modelId = run.cli.globals.model === undefined ? undefined : chooseModel(run.app, run.cli.globals)?.modelId
  }

  /** The model options of an agent this chat opens: the provider in use and the model id asked for. */
  private picked() {
    return { model: this.run.agent.model, ...(this.modelId ? { modelId: this.modelId } : {}) }
  }

  /** Asks the person about this agent's calls outside the permission mode; the answer is the next line typed. */
  private attend() {
    const { run } = this
    const questions = new PermissionQuestions((lines, prompt) => {
      // What a person approves is shown whole, never cut to the width.
      for (const line of lines) run.term.note(line, 'whole')
      this.hidePrompt()
      this.rl.setPrompt(prompt)
      this.showPrompt()
    }, () => {
      this.hidePrompt()
      this.rl.setPrompt(this.prompt())
      this.showPrompt()
    })
    this.questions = questions
    const stop = run.app.ctx.on('permissions/ask', (request) => (request.review.call.agent.id === run.agent.id ? questions.ask(request) : undefined))
    void run.app.closed.then(stop)
    this.rl.once('close', () => {
      stop()
      questions.close()
    })
  }

  async talk(): Promise<number> {
    const { run } = this
    const ended = new Promise<void>((resolve) => this.rl.once('close', () => resolve()))
    this.rl.on('line', (line) => {
      if (this.questions?.asking) {
        // readline has moved to a fresh line; the answer (or the question again) draws the next prompt.
        this.promptShown = false
        this.output.muted = true
        this.questions.take(line)
        this.showPrompt()
        return
      }
      if (this.interactive && !this.promptShown) this.unechoed.push(line)
      // readline has moved to a fresh line (or, muted, stayed where the output is).
      this.promptShown = false
      this.output.muted = true
      this.leaveArmed = false
      this.queue = this.queue.then(() => this.handle(line)).catch((error) => run.term.note(`error: ${describeError(error)}`))
      // The next line can be typed at once; it is handled after this one.
      this.showPrompt()
    })
    this.rl.on('SIGINT', () => this.onCtrlC())
    this.followTurns()
    run.app.ctx.inject(['goals'], (ctx) => {
      this.goalContext = ctx
      return () => {
        if (this.goalContext === ctx) this.goalContext = undefined
      }
    })
    if (this.interactive) {
      run.term.note(`chat in session ${run.agent.id}; /help lists the commands, Ctrl-D leaves`)
      if (this.run.goals && !run.app.ctx.get('goalDriver')) run.term.note('no goal round driver is loaded: a goal will not run rounds by itself')
      this.showPrompt()
    }
    // Restored human inputs of a resumed session run first.
    run.agent.wake()
    await Promise.race([ended, run.app.closed])
    this.closed = true
    await this.queue
    if (!this.interactive) await run.untilRest()
    return await this.leave()
  }

  private async handle(text: string): Promise<void> {
    const line = text.trim()
    if (this.closed && this.interactive) return
    if (line === '/exit' || line === '/quit') return void this.rl.close()
    if (line === '/help') return this.after(() => this.run.term.out(HELP))
    if (line === '/compact') return this.compact()
    if (line === '/cost') return this.after(() => this.cost())
    if (line === '/diff') return this.after(() => this.diff())
    const [word, ...rest] = line.split(/\s+/)
    const argument = rest.join(' ') || undefined
    if (word === '/model') return this.switching(() => this.model(argument))
    if (word === '/clear' && !argument) return this.switching(() => this.clear())
    if (word === '/resume') return this.switching(() => this.resume(argument))
    if (!line) return this.after(() => {})
    const command = parseGoalCommand(line)
    // A person at the prompt takes over: a waiting auto-resume ends (a message would cancel it too; /goal commands, /goal pause included, must as well).
    if (command) this.run.app.ctx.get('goalAutoResume')?.cancel(this.run.agent, 'a /goal command')
    if (command) return this.after(() => this.goalCommand(command))
    const message = this.run.agent.send({ content: line })
    const fate = await untilAnswered(this.run.app.ctx, this.run.agent, message.id, this.run.app.closed)
    if (fate.kind === 'cancelled' || fate.kind === 'rejected') this.run.term.note(`your message was ${fate.kind} before a turn took it (${fate.reason})`)
    this.showPrompt()
  }

  private after(action: () => void) {
    action()
    this.showPrompt()
  }

  private goalCommand(command: NonNullable<ReturnType<typeof parseGoalCommand>>) {
    const { term, agent } = this.run
    if (!this.goalContext) {
      term.note('/goal needs the goal plugin (@goalkeeper/goal), which this composition does not load')
      return
    }
    const result = executeGoalCommand(this.goalContext, agent, command)
    term.record({ type: 'command', session: agent.id, command: command.kind, ok: result.ok, code: result.code ?? null, message: result.message, goal: result.goal ?? null })
    if (result.ok) term.out(result.message, 'wrap')
    else term.note(result.message)
  }

  /** The whole session's totals: carried by its checkpoints, so a session held from one still counts what came before. */
  private totals(): HeldTotals {
    const tools = this.run.app.ctx.get('tools')
    return heldTotals(this.run.agent.session, (name) => tools?.get(name))
  }

  /** `/cost`: what this session's model calls used and cost, and a goal's spend against its budgets. */
  private cost() {
    const { term, agent } = this.run
    const held = this.totals()
    const usage = usageTotalsOf(held.totals)
    const cost = costOfHeld(held, this.run.price())
    const lines = [usage
      ? `session: ${describeUsage(usage)} in ${usage.calls} model call${usage.calls === 1 ? '' : 's'}${cost === undefined ? '' : `; cost ${describeCost(cost)}`}`
      : 'session: no model calls yet']
    if (held.from > 0) lines.push(partialNote(held.from))
    const goal = this.run.goals?.get(agent)
    const spend = goal && describeSpend(goal)
    if (spend) lines.push(`goal: ${spend}`)
    term.record({ type: 'command', session: agent.id, command: 'cost', ok: true, message: lines.join('\n'), usage: usage ?? null, costUsd: cost ?? null })
    term.out(lines.join('\n'), 'wrap')
  }

  /**
   * `/diff`: the file edits recorded in this session, as unified diffs. Those before the checkpoint its totals
   * went on from are counted, not shown: this process no longer holds them (`show` reads the log).
   */
  private diff() {
    const { term, agent, app } = this.run
    const tools = app.ctx.get('tools')
    const held = this.totals()
    const shown = changesOf(held.since, (name) => tools?.get(name), term.colour)
    const { edits, files, commands } = held.totals
    const earlier = edits - shown.changes
    const lines = [
      changesLine(edits, files.length, commands),
      ...(held.from > 0 ? [partialNote(held.from)] : []),
      ...(earlier > 0 ? [`${earlier} earlier edit${earlier === 1 ? '' : 's'}, before the checkpoint at record ${held.checkpointSeq}, ${earlier === 1 ? 'is' : 'are'} not held here: ${cliCommand(this.run.cli.globals, 'show', agent.id)} shows ${earlier === 1 ? 'it' : 'them'}`] : []),
      ...shown.lines,
    ]
    term.record({ type: 'command', session: agent.id, command: 'diff', ok: true, message: lines.join('\n') })
    term.out(lines.join('\n'))
  }

  /**
   * Runs a command that continues on another agent (/model, /clear, /resume) once the agent is idle; refused
   * while a goal's rounds run, which would be cut off.
   */
  private async switching(action: () => Promise<string | undefined>) {
    const { term, agent } = this.run
    await agent.whenIdle()
    const goal = this.run.goals?.get(agent)
    if (goal && isRunnable(goal) && this.run.app.ctx.get('goalDriver')) {
      term.note('the goal is running rounds: /goal pause first (or Ctrl-C), then switch')
      return this.showPrompt()
    }
    try {
      const message = await action()
      if (message) term.out(message, 'wrap')
    } catch (error) {
      term.note(describeError(error))
    }
    this.showPrompt()
  }

  /** `/model`: the model in use; `/model provider[/model]`: the same session continued with another model. */
  private async model(wanted: string | undefined): Promise<string | undefined> {
    const { run } = this
    const models = run.app.ctx.get('models')
    if (!wanted) return describeModel(models, run.agent.model)
    const choice = chooseModel(run.app, { model: wanted })!
    const id = run.agent.id
    await run.switchAgent((agents) => agents.resume(id, { model: choice.model, ...(choice.modelId ? { modelId: choice.modelId } : {}) }), true)
    this.modelId = choice.modelId
    return `${choice.line.replace(/; chosen with --model$/, '')}; the conversation goes on with it`
  }

  /**
   * `/clear`: a new session in the same workspace, with an empty history. The goal is not carried over: it
   * belongs to the old session, which keeps it (paused where it was) for /resume or `chat --session`.
   */
  private async clear(): Promise<string | undefined> {
    const { run } = this
    const old = run.agent.id
    const picked = this.picked()
    const hadGoal = !!run.goals?.get(run.agent)
    await run.switchAgent((agents) => agents.create({ cwd: run.cli.globals.cwd, ...picked }), false)
    return `new session ${run.agent.id}; the previous one is saved as ${old}${hadGoal ? ' and keeps its goal' : ''} (/resume ${old} returns to it)`
  }

  /** `/resume`: the recent sessions of this workspace; `/resume <id>`: continue one of them here. */
  private async resume(wanted: string | undefined): Promise<string | undefined> {
    const { run } = this
    const sessions = run.app.ctx.get('sessions')!
    if (!wanted && !this.interactive) {
      const recent = await recentWithGoals(sessions, run.cli.globals)
      const rows = recent.map((summary) => [summary.id === run.agent.id ? `${summary.id} *` : summary.id, formatTime(summary.updatedAt), oneLine(summary.title ?? '', 40)])
      return ['recent sessions of this project (* this one); /resume <id> continues one:', ...table(rows).map((row) => `  ${row}`)].join('\n')
    }
    const id = !wanted ? await this.pick(sessions) : wanted === '--last' ? await lastSessionId(sessions, run.cli.globals) : await resolveSessionId(sessions, wanted, run.cli.globals)
    if (id === undefined) return undefined
    if (id === run.agent.id) return 'this is the session in use'
    const picked = this.picked()
    await run.switchAgent((agents) => agents.resume(id, picked), true)
    const { totals, from } = this.totals()
    const turns = totals.turns
    return `resumed session ${id} (${turns} turn${turns === 1 ? '' : 's'} so far${from > 0 ? `, counted from record ${from}` : ''})`
  }

  /** `/resume` on a terminal: the person picks one of the recent sessions; undefined when cancelled. */
  private async pick(sessions: SessionService): Promise<string | undefined> {
    const recent = await recentWithGoals(sessions, this.run.cli.globals)
    if (!recent.length) throw new HostError('no saved session of this project yet')
    // The picker owns the terminal meanwhile: the prompt steps aside and comes back after.
    this.run.term.surface?.hide()
    try {
      return await pickSession({ input: this.input, output: this.stdout }, recent, this.run.agent.id)
    } finally {
      this.run.term.surface?.show()
    }
  }

  /** `/compact`: the live view shows a compaction as it is recorded; only a compaction that did not happen needs a word here. */
  private async compact() {
    const { term, agent } = this.run
    // The answer to the previous line may be out before its turn has fully ended.
    await agent.whenIdle()
    const result = await agent.compact()
    const message = result.kind === 'compacted' ? compactionLine(result.data)
      : result.kind === 'unchanged' ? `nothing compacted: ${result.why}`
        : `compaction failed: ${result.error.code}: ${result.error.message}`
    term.record({ type: 'command', session: agent.id, command: 'compact', ok: result.kind === 'compacted', message })
    if (result.kind !== 'compacted') term.note(message)
    this.showPrompt()
  }

  /** Piped or --json runs have no streamed text: each turn's answer is printed when the turn ends. */
  private followTurns() {
    const { term, app } = this.run
    if (term.streaming) return
    const stop = app.ctx.on('agent/turn-end', (ended: Agent, turn: number) => {
      // The agent in use: /model, /clear and /resume switch to another one.
      if (ended.id !== this.run.agent.id) return
      const answer = lastAssistantText(ended.session.records, turn)
      if (answer) term.out(answer)
    })
    void app.closed.then(stop)
  }

  private onCtrlC() {
    const { run } = this
    const action = interruptWork(run.agent, run.goals)
    if (action) {
      this.leaveArmed = false
      run.term.note(describeInterrupt(action))
      return
    }
    if (this.rl.line) {
      // Like a shell: Ctrl-C drops what was typed.
      this.leaveArmed = false
      this.rl.write(null, { ctrl: true, name: 'u' })
      return
    }
    if (this.leaveArmed) return void this.rl.close()
    this.leaveArmed = true
    run.term.note('press Ctrl-C again to leave (or Ctrl-D)')
  }

  /** `> `, led by the live status while the agent works (clipped so the line keeps room to type). */
  private prompt(): string {
    if (this.status === undefined) return '> '
    const room = Math.max(20, ((this.stdout as { columns?: number }).columns || 80) - 30)
    const status = Array.from(this.status).length <= room ? this.status : `${Array.from(this.status).slice(0, room - 1).join('')}…`
    return `${status} > `
  }

  private showPrompt() {
    if (!this.interactive || this.closed || this.promptShown || !this.surfaceFree) return
    for (const line of this.unechoed.splice(0)) this.stdout.write(`> ${line}\n`)
    this.promptShown = true
    this.output.muted = false
    // Draws the prompt with whatever was typed meanwhile, cursor kept.
    this.rl.prompt(true)
  }

  private hidePrompt() {
    this.output.muted = true
    if (!this.promptShown) return
    clearLine(this.stdout, 0)
    cursorTo(this.stdout, 0)
    this.promptShown = false
  }

  private async leave(): Promise<number> {
    const { run } = this
    await run.checkSaved()
    // The exit hints go where the prompt was, not after it.
    this.hidePrompt()
    this.run.term.surface = undefined
    this.rl.close()
    const goal = run.goal()
    if (goal && goal.phase !== 'complete') {
      run.hint(`the goal is ${goal.phase}; to continue it, run /goal resume in`, 'chat', '--session', run.agent.id)
    } else if (this.interactive) {
      run.hint('to continue this session', 'chat', '--session', run.agent.id)
    }
    const outcome = run.lastOutcome()
    return run.finish(goal ? goalExitCode(goal) : outcome ? turnExitCode(outcome) : ExitCode.OK)
  }
}

