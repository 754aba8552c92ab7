import type { Context } from 'cordis'
import Schema from 'schemastery'
import type {} from '@goalkeeper/agent-loop'
import type {} from '@goalkeeper/goal'
import type {} from '@goalkeeper/permissions'
import { describeError } from '@goalkeeper/kit'
import { applyControl } from './apply.ts'
import { Approvals } from './approvals.ts'
import { controlDir } from './places.ts'
import { startControlServer } from './server.ts'

export { controlDir, CONTROL_DIR_VARIABLE, pointerFile, socketFile } from './places.ts'
export { CONTROL_ACTIONS, CONTROL_SOURCES, ControlError, parseRequest, type ControlAction, type ControlReply, type ControlRequest, type ControlSource, type ControlStatus, type PendingApproval } from './protocol.ts'
export { sendControl, ControlUnavailable, type ControlClientOptions } from './client.ts'
export { CONTROL_RECORD, type ControlRecord } from './records.ts'
export { applyControl, statusOf } from './apply.ts'
export { Approvals } from './approvals.ts'

export const name = 'control'
export const inject = ['agents', 'goals']

export const Config = Schema.object({
  dir: Schema.string().default('').description('Where the control socket and the notes naming held sessions go; empty: $GOALKEEPER_CONTROL_DIR, else goalkeeper-control-<uid> in the temp directory.'),
  approvals: Schema.boolean().default(false).description('Take the permission questions of this process\'s agents, to be answered from the board; a question then waits until someone answers or its turn is cancelled.'),
})
export type Config = Schemastery.TypeT<typeof Config>

export const apply = async (ctx: Context, config: Config) => {
  const approvals = new Approvals()
  const dir = config.dir || controlDir()
  let server
  try {
    server = await startControlServer(dir, (request) => applyControl(ctx, approvals, request, config.approvals))
  } catch (error) {
    // Controls are a convenience: a process that cannot serve them still runs its goals.
    ctx.logger.warn('no controls from the board for this process: %s', describeError(error))
    return
  }
  const held = server
  const hold = (id: string) => held.hold(id).catch((error) => ctx.logger.warn('session %s cannot be controlled: %s', id, describeError(error)))
  await ctx.effect(function* () {
    yield async () => {
      approvals.dropAll()
      await held.close()
    }
    yield ctx.on('agent/session-start', (agent) => void hold(agent.id))
    yield ctx.on('agent/disposed', (agent) => void held.release(agent.id))
    if (config.approvals) yield ctx.on('permissions/ask', (request) => approvals.take(request))
  }, 'control')
  for (const agent of ctx.agents.list()) await hold(agent.id)
}
