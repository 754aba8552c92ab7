import { formatReport, type LoadReport, reportJson, summarizeChanges } from '@goalkeeper/loader'
import type { App } from '../app.ts'
import type { CommandContext } from '../command.ts'
import { describePermissions } from './lookup/permissions.ts'
import { guardedInWorkspace } from './lookup/guarded.ts'
import { defineCommand } from '../command.ts'
import { ExitCode } from '../exit-codes.ts'
import { chooseModel } from './run/model-choice.ts'
import { outputWidth, wrapText } from './render/text.ts'

function show(cli: CommandContext, app: App, report: LoadReport, type: 'check' | 'reload') {
  const permissions = app.ctx.get('permissions')?.describe()
  const warnings = guardedInWorkspace(app, cli.globals.cwd)
  if (cli.globals.json) return cli.printJson({ ...reportJson(type, report), permissions: permissions ?? null, warnings })
  // The long lines (the permissions in full, the sandbox, warnings) are wrapped to the terminal.
  const say = (line: string) => cli.print(wrapText(line, outputWidth(cli.io.stdout)))
  if (type === 'reload') {
    say(report.error ? `reload failed: ${report.error}; kept the running composition` : `reloaded: ${summarizeChanges(report.changes)}`)
  }
  // One print (one redaction pass, one write) for the whole report, which can run to 200,000 lines.
  cli.print(formatReport(report).join('\n'))
  // Whether commands are sandboxed here is part of what loaded: a missing bwrap is found now, not mid-goal.
  say(describePermissions(app, true))
  for (const warning of warnings) say(`warning: ${warning}`)
  if (permissions) say(permissions.sandbox.available ? `sandbox: bubblewrap ${permissions.sandbox.version} (${permissions.sandbox.path}), capabilities dropped, commands run as uid ${permissions.sandbox.uid}` : `sandbox: unavailable: ${permissions.sandbox.reason}`)
}

export default defineCommand({
  name: 'check',
  description: 'load the composition and report which entries loaded and which failed (with --watch: keep reloading)',
  configure: (command) =>
    command.addHelpText('after', '\nExit codes: 0 every enabled entry loaded (with --watch: stopped by a signal), 64 an entry failed or waits for a service.'),
  async run(cli) {
    const app = await cli.startApp()
    show(cli, app, app.report, 'check')
    // Which model an agent would use, and why (an unusable --model is an error like a failed entry).
    const choice = chooseModel(app, cli.globals)
    if (choice && !cli.globals.json) cli.print(choice.line)
    if (cli.globals.configSource === 'user' && !cli.globals.json) cli.print(wrapText(`(no cordis.yml in ${cli.globals.cwd}: the user's ${app.report.file} is used)`, outputWidth(cli.io.stdout)))
    if (!cli.globals.watch) return app.report.ok ? ExitCode.OK : ExitCode.USAGE
    app.loader.on('reload', (report) => show(cli, app, report, 'reload'))
    cli.note(`watching ${app.loader.file} for changes (Ctrl-C to stop)`)
    await app.closed
    return ExitCode.OK
  },
})
