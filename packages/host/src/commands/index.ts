import type { CommandDefinition } from '../command.ts'
import check from './check.ts'

/** Every CLI command, in the order `--help` lists them. Add a command by adding its file here. */
export const commands: CommandDefinition[] = [check]
