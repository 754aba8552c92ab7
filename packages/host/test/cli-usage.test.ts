// What a person meets first: mistyped command lines, help, a cordis.yml that does not load or is not
// there, output cut short by `| head`, and the commands that hints suggest.
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, hint, jsonLines, repoRoot, run, sessionIdOf, start, useProject } from '@goalkeeper/test-kit'

const project = useProject()

const answer = 'export default many(() => ({ text: "Hello back." }))'

describe('goalkeeper usage', { timeout: CLI_TIMEOUT }, () => {
  it('a mistyped command line is one line with a hint naming the right help (and the likely word); --json adds an error object', async () => {
    const [command, option, missing, json] = await Promise.all([
      run(['rn', 'hello']),
      run(['run', '--sesion', 'x', 'hello']),
      run(['show']),
      run(['--json', 'frobnicate']),
    ])
    for (const result of [command, option, missing, json]) expect(result.code, result.stderr).toBe(64)
    expect(command.stderr).toBe("goalkeeper: unknown command 'rn' (hint: did you mean run? see goalkeeper --help)\n")
    expect(option.stderr).toBe("goalkeeper: unknown option '--sesion' (hint: did you mean --session? see goalkeeper run --help)\n")
    // The id may be left out for --last, so show itself says what it needs.
    expect(missing.stderr).toBe('goalkeeper: show needs the session: its id, or --last (hint: goalkeeper sessions lists them)\n')
    expect([command.stdout, option.stdout, missing.stdout]).toEqual(['', '', ''])
    expect(jsonLines(json.stdout)).toEqual([{ type: 'error', message: "unknown command 'frobnicate'", hint: 'see goalkeeper --help', exitCode: 64 }])
  })

  it('every command\'s help lists its options, the global options and its exit codes', async () => {
    const names = ['run', 'goal', 'chat', 'resume', 'sessions', 'show', 'check', 'board']
    const helps = await Promise.all(names.map((name) => run([name, '--help'])))
    helps.forEach((help, index) => {
      expect(help.code, help.stderr).toBe(0)
      expect(help.stdout).toMatch(new RegExp(`^Usage: goalkeeper ${names[index]} `))
      for (const part of ['\nOptions:\n', '\nGlobal Options:\n', '--config <path>', '--cwd <dir>', '--json', '--log-level <level>', '\nExit codes:']) {
        expect(help.stdout, `${names[index]} --help`).toContain(part)
      }
    })
  })

  it('an entry that does not load stops an agent command with one line naming every failure; debug shows the details', async () => {
    const p = await project({ script: answer, config: { 'loop-guard': { softThreshold: 'lots' } }, extraYml: '- id: boom\n  name: ./boom.mjs\n' })
    await writeFile(path.join(p.dir, 'boom.mjs'), "export const name = 'boom'\nexport const apply = () => { throw new Error('connection refused') }\n")
    const [plain, debug] = await Promise.all([run([...p.globals, 'run', 'hello']), run([...p.globals, '--log-level', 'debug', 'run', 'hello'])])
    expect(plain.code).toBe(64)
    expect(plain.stdout).toBe('')
    // Without this, the loader's line for each entry and Cordis's own error line came first.
    expect(plain.stderr).toBe(`goalkeeper: ${p.yml}: 2 entries did not load: entry "loop-guard": config.softThreshold: expected a number, got "lots"; `
      + `entry "boom": apply failed: connection refused (hint: fix them or mark them \`disabled: true\`; \`${hint(p)} check\` lists every entry)\n`)
    expect(debug.code).toBe(64)
    expect(debug.stderr).toContain('[E] loader entry "boom": apply failed: connection refused\n')
    expect(debug.stderr).toMatch(/\[E\] boom Error: connection refused\n\s+at /)
  })

  it('a --config that is not there names the default composition', async () => {
    const p = await project({ script: answer })
    const missing = await run(['--cwd', p.workspace, '--config', 'nope.yml', 'run', 'hello'])
    expect(missing.code).toBe(64)
    expect(missing.stderr).toBe(`goalkeeper: --config ${path.join(p.workspace, 'nope.yml')}: no such file `
      + `(hint: a relative --config starts at --cwd; the default composition is --config ${path.join(repoRoot, 'cordis.yml')})\n`)
  })

  it('a reader that stops early (| head) ends the command quietly with its own exit code', async () => {
    const p = await project({ script: answer })
    const first = await run([...p.globals, 'run', 'hello'])
    expect(first.code, first.stderr).toBe(0)
    const shown = start([...p.globals, '--json', 'show', sessionIdOf(first.stderr)])
    // Closed before the child writes anything: every write of it meets a closed pipe (EPIPE).
    shown.child.stdout!.destroy()
    expect(await shown.exited(), shown.stderr()).toBe(0)
    expect(shown.stderr()).not.toMatch(/EPIPE|\n\s+at /)
  })

  it('started through npm in the repository, hints say npx goalkeeper (goalkeeper is not on PATH there)', async () => {
    const p = await project({ script: answer })
    const env = { npm_package_name: 'goalkeeper' }
    const [ran, usage] = await Promise.all([run([...p.globals, 'run', 'hello'], { env }), run(['rn'], { env })])
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stderr).toContain(`goalkeeper: the session is saved; to read it: npx ${hint(p)} show ${sessionIdOf(ran.stderr)}\n`)
    expect(usage.stderr).toBe("goalkeeper: unknown command 'rn' (hint: did you mean run? see npx goalkeeper --help)\n")
  })
})
