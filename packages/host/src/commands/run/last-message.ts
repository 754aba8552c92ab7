// `--output-last-message FILE` of run, goal and resume: the final answer written to a file, as `codex exec` does,
// so that a script gets it without parsing stdout.
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Command } from 'commander'
import { describeError } from '@goalkeeper/kit'
import { HostError } from '../../errors.ts'

export interface LastMessageOptions {
  outputLastMessage?: string
}

export function withOutputLastMessage(command: Command): Command {
  return command.option('--output-last-message <file>', 'also write the final answer to this file (empty when there is none); relative to --cwd')
}

/**
 * The file's absolute path, written empty now: a path that cannot be written is refused before any model
 * call is made (and paid for), not found out after the work.
 */
export function prepareLastMessage(cwd: string, file: string | undefined): string | undefined {
  if (file === undefined) return undefined
  const target = path.resolve(cwd, file)
  try {
    writeFileSync(target, '')
  } catch (error) {
    throw new HostError(`--output-last-message ${target}: ${describeError(error)}`, { hint: 'name a file in a directory that exists and that you can write' })
  }
  return target
}

/** Writes the answer; the reason it could not, or undefined. */
export function writeLastMessage(target: string, answer: string | undefined): string | undefined {
  try {
    writeFileSync(target, answer === undefined ? '' : `${answer}\n`)
    return undefined
  } catch (error) {
    return describeError(error)
  }
}
