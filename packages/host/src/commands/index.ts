import type { CommandDefinition } from '../command.ts'
import acp from './acp.ts'
import board from './board.ts'
import chat from './chat/chat.ts'
import check from './check.ts'
import goal from './goal.ts'
import hooks from './hooks.ts'
import pause from './pause.ts'
import resume from './resume.ts'
import run from './run.ts'
import sessions from './sessions.ts'
import submit from './fleet/submit.ts'
import queue from './fleet/queue.ts'
import worker from './fleet/worker.ts'
import show from './show/show.ts'

/** Every CLI command, in the order `--help` lists them. Add a command by adding its file here. */
export const commands: CommandDefinition[] = [run, goal, chat, resume, pause, sessions, show, check, hooks, submit, worker, queue, board, acp]
