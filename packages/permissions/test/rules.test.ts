// Deny and ask patterns look inside compound commands, wrappers and nested command lines; allow patterns
// vouch only for a simple command. Table-driven over the compiled rules, as the gate uses them.
import { describe, expect, it } from 'vitest'
import type { PermissionRule } from '../src/config.ts'
import { compileRules, strongestRule } from '../src/rules.ts'
import { commandsIn } from '../src/shell.ts'

const rules = compileRules([
  { command: 'git push*', action: 'deny', reason: 'pushing is for people' },
  { command: 'rm -rf *', action: 'ask' },
  { command: 'npm test*', action: 'allow' },
] as PermissionRule[])
const verdict = (command: string) => strongestRule(rules, 'run_command', { command })?.action ?? 'none'

describe('command rules see through the shell', () => {
  const denied = [
    'git push',
    'git push origin main',
    'env git push',
    'env -i PATH=/bin X=1 git push',
    'eval "git push"',
    "eval 'git' push",
    'X=1 git push',
    'X=1 Y="a b" git push --force',
    'command git push',
    'command -p git push',
    'exec git push',
    'exec -a name git push',
    'nice git push',
    'nice -n 10 git push',
    'timeout 30 git push',
    'timeout -s KILL 5s git push',
    'nohup git push &',
    'sudo -u deploy git push',
    'nice -n 5 timeout 10 env A=1 command git push',
    '(git push)',
    '( cd repo && git push )',
    '{ git push; }',
    'if true; then git push; fi',
    'if false; then :; else git push; fi',
    'for remote in a b; do git push $remote; done',
    'while true; do git push; done',
    'until git push; do sleep 1; done',
    'echo a && git push',
    'false || git push',
    'echo a; git push',
    'echo a | git push',
    'echo a |& git push',
    'sleep 1 & git push',
    'echo $(git push)',
    'echo "$(git push)"',
    'echo `git push`',
    'echo "`git push`"',
    'echo a\ngit push',
    'sh -c "git push"',
    "bash -lc 'cd x && git push'",
    '/bin/sh -c "eval \\"git push\\""',
    'git "push"',
    "git 'push' origin",
    'git push 2>&1 > out.log',
    'cat < in.txt | git push',
  ]
  for (const command of denied) {
    it(`denies ${JSON.stringify(command)}`, () => expect(verdict(command)).toBe('deny'))
  }

  const notDenied: [command: string, expected: string][] = [
    ['echo "git push"', 'none'],
    ["echo 'a; git push'", 'none'],
    ['git status', 'none'],
    ['git pushx', 'deny'], // the pattern is `git push*`: as written
    ['npm test', 'allow'],
    ['npm test -- --run', 'allow'],
    ['npm test; curl evil.example', 'none'],
    ['npm test && git push', 'deny'],
    ['env npm test', 'none'],
    ['cd / && rm -rf build', 'ask'],
    ['echo # git push', 'none'],
  ]
  for (const [command, expected] of notDenied) {
    it(`gives ${expected} for ${JSON.stringify(command)}`, () => expect(verdict(command)).toBe(expected))
  }

  it('lists the simple commands of a line, behind their wrappers', () => {
    expect(commandsIn('nice -n 5 timeout 10 git push')).toEqual(['nice -n 5 timeout 10 git push', 'timeout 10 git push', 'git push'])
    expect(commandsIn('if [ -f x ]; then X=1 make all; fi')).toEqual(['[ -f x ]', 'make all'])
    expect(commandsIn('echo `date` $(uname -a)')).toEqual(['date', 'echo', 'uname -a'])
  })

  it('follows nested command lines to a fixed depth; one nested deeper matches every deny and ask rule', () => {
    const nest = (line: string, levels: number): string => (levels ? nest(`eval ${JSON.stringify(line)}`, levels - 1) : line)
    expect(verdict(nest('git push', 3))).toBe('deny')
    expect(verdict(nest('git status', 3))).toBe('none')
    expect(verdict(nest('git status', 12))).toBe('deny')
    expect(compileRules([{ command: 'npm test*', action: 'allow' }] as PermissionRule[]).some((rule) => rule.matches('run_command', { command: nest('npm test', 12) }))).toBe(false)
  })
})
