import { clearLine, createInterface, cursorTo, type Interface } from 'node:readline'
import type { Context } from 'cordis'
import { executeGoalCommand, GOAL_COMMAND_USAGE, parseGoalCommand } from '@goalkeeper/tool-goal'
import type { Agent } from '@goalkeeper/agent-loop'
import { compactionLine, lastAssistantText } from '@goalkeeper/session'
import { defineCommand } from '../../command.ts'
import { describeError } from '@goalkeeper/kit'
import { ExitCode } from '../../exit-codes.ts'
import { EXIT_CODE_HELP, goalExitCode, turnExitCode } from '../render/outcome.ts'
import { AgentRun } from '../run/agent-run.ts'
import { withMaxSteps, type MaxStepsOptions } from '../run/goal-options.ts'
import { describeInterrupt, interruptWork } from '../run/interrupt.ts'
import { untilAnswered } from './answered.ts'
import { PermissionQuestions } from './permission-question.ts'
import { PromptOutput } from './prompt-output.ts'

const HELP = [
  'Type a message and press Enter to send it. While a goal runs, what you type goes first: the next round waits.',
  GOAL_COMMAND_USAGE,
  '/compact                   compact the history now: a summary replaces the earlier conversation',
  '/help                      this text',
  '/exit                      leave (or Ctrl-D); Ctrl-C cancels the running turn, twice at an empty prompt leaves',
].join('\n')

export interface ChatOptions extends MaxStepsOptions {
  session?: string
}

export default defineCommand<ChatOptions>({
  name: 'chat',
  description: 'talk with the agent in a session; /goal commands set and steer the session goal',
  configure: (command) =>
    withMaxSteps(command)
      .option('--session <id>', 'continue a saved session (id, or an unambiguous part of it)')
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
    const run = await AgentRun.open(cli, { session: options.session, purpose: 'chat', repeatInterrupts: true, attended, maxSteps: options.maxSteps })
    const chat = new Chat(run, input, attended)
    return chat.talk()
  },
})

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

  constructor(private run: AgentRun, input: NodeJS.ReadableStream & { isTTY?: boolean }, attended: boolean) {
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
  }

  /** Asks the person about this agent's calls outside the permission mode; the answer is the next line typed. */
  private attend() {
    const { run } = this
    const questions = new PermissionQuestions((lines, prompt) => {
      for (const line of lines) run.term.note(line)
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
    if (result.ok) term.out(result.message)
    else term.note(result.message)
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
    const { term, agent, app } = this.run
    if (term.streaming) return
    const stop = app.ctx.on('agent/turn-end', (ended: Agent, turn: number) => {
      if (ended.id !== agent.id) return
      const answer = lastAssistantText(agent.session.records, turn)
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

