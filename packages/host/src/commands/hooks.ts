import { readFile } from 'node:fs/promises'
import type { HookAnswer, HookEvent, HookSpecConfig, Trust } from '@goalkeeper/hooks'
import { parseComposition } from '@goalkeeper/loader'
import { clip, describeError } from '@goalkeeper/kit'
import { type CommandContext, defineCommand } from '../command.ts'
import { HostError } from '../errors.ts'
import { ExitCode } from '../exit-codes.ts'
import { docFile } from '../home.ts'
import { programName } from '../invocation.ts'

// The hooks package is imported when the command runs, so `--help` and other commands never load it.
const load = () => import('@goalkeeper/hooks')

/** One hooks entry of the composition: its hooks as the plugin will run them, and whether they may run. */
interface HooksEntry {
  id: string
  disabled: boolean
  hooks: HookSpecConfig[]
  continueLimit: number
  trust: Trust
}

const PLUGIN = '@goalkeeper/hooks'

async function readEntries(cli: CommandContext): Promise<HooksEntry[]> {
  const { Config, trustOf } = await load()
  const file = cli.globals.config
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new HostError(`cannot read ${file}: ${describeError(error)}`, { hint: 'pass --config PATH, or run where cordis.yml is' })
  }
  const entries: HooksEntry[] = []
  for (const spec of parseComposition(text, process.env)) {
    if (spec.kind !== 'plugin' || spec.name !== PLUGIN) continue
    let config
    try {
      config = Config((spec.config ?? {}) as never)
    } catch (error) {
      throw new HostError(`${file}: ${spec.label}: ${describeError(error)}`, { hint: 'fix the entry; `goalkeeper check` names every problem' })
    }
    // The composition goalkeeper comes with is its own, as trusted as the user's file.
    const trust = cli.globals.configSource === 'built-in'
      ? { state: 'user' as const, file, digest: '' }
      : await trustOf(file, config.hooks)
    entries.push({ id: spec.id, disabled: spec.disabled, hooks: config.hooks, continueLimit: config.continueLimit, trust })
  }
  return entries
}

const TRUST_WORDS: Record<Trust['state'], string> = {
  code: 'run',
  user: 'run: the user\'s own file',
  approved: 'run: approved',
  unapproved: `do not run: not approved (review them, then \`${programName()} hooks approve\`)`,
}

async function list(cli: CommandContext, entries: HooksEntry[]): Promise<number> {
  const { describeHook } = await load()
  const file = cli.globals.config
  if (cli.globals.json) {
    cli.printJson({ type: 'hooks', file, entries: entries.map((e) => ({ id: e.id, disabled: e.disabled, trust: e.trust.state, continueLimit: e.continueLimit, hooks: e.hooks })) })
    return ExitCode.OK
  }
  if (!entries.length) {
    cli.print(`no hooks in ${file} (add an entry named ${PLUGIN}; see ${docFile('packages/hooks/README.md')})`)
    return ExitCode.OK
  }
  for (const entry of entries) {
    const state = entry.disabled ? 'disabled' : TRUST_WORDS[entry.trust.state]
    cli.print(`${file}, entry "${entry.id}": ${entry.hooks.length} hooks, which ${state}`)
    for (const hook of entry.hooks) cli.print(`  ${describeHook(hook)}`)
  }
  return ExitCode.OK
}

async function approve(cli: CommandContext, entries: HooksEntry[]): Promise<number> {
  const { approveHooks } = await load()
  const file = cli.globals.config
  const pending = entries.filter((e) => !e.disabled && e.hooks.length)
  // With --json stdout holds typed lines only: saying that nothing was approved is a note then.
  const say = (line: string) => (cli.globals.json ? cli.note(line) : cli.print(line))
  if (!pending.length) {
    say(`nothing to approve: no hooks in ${file}`)
    return ExitCode.OK
  }
  if (pending.every((e) => e.trust.state === 'user' || e.trust.state === 'code')) {
    say(`nothing to approve: ${file} is the user's own file, whose hooks always run`)
    return ExitCode.OK
  }
  // What is approved is what is listed: the person sees the commands in the same output.
  await list(cli, pending)
  const record = await approveHooks(file, pending.map((e) => e.trust.digest))
  if (cli.globals.json) cli.printJson({ type: 'hooks-approved', file, record })
  else cli.print(`approved: these hooks of ${file} run from the next start on (recorded in ${record}); a change to them needs a new approval`)
  return ExitCode.OK
}

function outcomeLine(answer: HookAnswer): string {
  const parts: string[] = [answer.outcome]
  if (answer.problem) parts.push(answer.problem)
  if (answer.block !== undefined) parts.push(`block: ${answer.block}`)
  if (answer.permission) parts.push(`${answer.permission}${answer.permissionReason ? `: ${answer.permissionReason}` : ''}`)
  if (answer.updatedInput) parts.push(`rewrite: ${JSON.stringify(answer.updatedInput)}`)
  if (answer.context) parts.push(`context: ${answer.context}`)
  if (answer.stop !== undefined) parts.push(`stop: ${answer.stop}`)
  return parts.join('; ')
}

async function test(cli: CommandContext, entries: HooksEntry[], eventName: string | undefined, tool: string | undefined): Promise<number> {
  const { compileHooks, EVENT_NAMES, HOOK_EVENTS, hookEnv, hookInput, parseEvent, readAnswer, runCommand, sampleEvent } = await load()
  const event: HookEvent | undefined = eventName === undefined ? undefined : parseEvent(eventName)
  if (!event) {
    throw new HostError(eventName === undefined ? 'hooks test: which event?' : `hooks test: no event "${eventName}"`, {
      hint: `name one of ${EVENT_NAMES.map((e) => `${e} (${HOOK_EVENTS[e]})`).join(', ')}`,
      exitCode: ExitCode.USAGE,
    })
  }
  const cwd = cli.globals.cwd
  const sample = sampleEvent(event, cwd, tool)
  const input = hookInput(event, { cwd, session: { id: 'sample-session', file: '' } }, sample.fields)
  let ran = 0
  let failed = 0
  for (const entry of entries) {
    if (entry.disabled) continue
    if (entry.trust.state === 'unapproved') {
      cli.note(`entry "${entry.id}": its hooks are not approved and are not run (\`${programName()} hooks approve\`)`)
      continue
    }
    for (const hook of compileHooks(entry.hooks).filter((h) => h.event === event && h.matches(sample.target))) {
      ran++
      const result = await runCommand(hook.command, { input, cwd, env: hookEnv(event, cwd), timeoutMs: hook.timeoutMs, maxOutput: hook.maxOutput })
      const answer = readAnswer(event, result, hook.timeoutMs)
      if (answer.outcome === 'failed' || answer.outcome === 'timeout' || answer.outcome === 'garbage') failed++
      if (cli.globals.json) cli.printJson({ type: 'hook-run', event, hook: hook.label, exitCode: result.exitCode, signal: result.signal, durationMs: result.durationMs, answer })
      else {
        cli.print(`${HOOK_EVENTS[event]} hook "${hook.label}": exit ${result.exitCode ?? result.signal ?? '-'} in ${result.durationMs} ms: ${outcomeLine(answer)}`)
        // What it printed, as the one testing it wants to see (a notification text, a formatter's complaint).
        for (const [stream, text] of [['stdout', result.stdout], ['stderr', result.stderr]] as const) {
          if (text.trim()) cli.print(`  ${stream}: ${clip(text.trim(), 2000).split('\n').join('\n    ')}`)
        }
      }
    }
  }
  if (!ran && !cli.globals.json) cli.print(`no hook of ${cli.globals.config} runs on ${event} (${HOOK_EVENTS[event]}) for this sample`)
  return failed ? ExitCode.RUNTIME : ExitCode.OK
}

export interface HooksOptions {
  tool?: string
}

export default defineCommand<HooksOptions>({
  name: 'hooks',
  description: 'list the command hooks in force, where they come from and whether they may run; approve a workspace file\'s hooks; test them on a sample event',
  configure: (command) =>
    command
      .argument('[action]', '`list` (default), `approve` (the hooks of the cordis.yml in use, as they are now), or `test`')
      .argument('[event]', 'with test: the event, in goalkeeper\'s or Claude Code\'s spelling (before-tool-call or PreToolUse)')
      .option('--tool <name>', 'with test: the tool of a sample tool event (default run_command)')
      .addHelpText('after', `
Hooks of a cordis.yml outside your config dir ($XDG_CONFIG_HOME/goalkeeper) run only after you approved
them with \`hooks approve\`; a changed hook needs a new approval. \`hooks test\` runs the hooks of one event
against a made-up event and prints what each answered (exit 70 when one failed).`),
  async run(cli, args, options) {
    const [action = 'list', event] = args as [string | undefined, string | undefined]
    const entries = await readEntries(cli)
    if (action === 'list') return list(cli, entries)
    if (action === 'approve') return approve(cli, entries)
    if (action === 'test') return test(cli, entries, event, options.tool)
    throw new HostError(`hooks: no action "${action}"`, { hint: 'use list, approve or test', exitCode: ExitCode.USAGE })
  },
})
