import { type ControlReply, type ControlRequest, ControlUnavailable, sendControl } from '@goalkeeper/control'
import type { CommandContext } from '../../command.ts'
import { fleetHostError, openFleet } from '../fleet/fleet-app.ts'

/** Where a control for a session goes: the process on this machine that holds it, else the fleet's worker. */
export interface ControlChannel {
  send(request: ControlRequest): Promise<ControlReply>
}

/**
 * The control channel of a command: the control socket of the process on this machine that holds the
 * session, and with `database` (a fleet's), when none does, the worker that runs it through the database.
 * The fleet's composition is loaded on the first control that needs it.
 */
export function controlChannel(cli: CommandContext, database: string | undefined): ControlChannel {
  let fleet: ReturnType<typeof queueOf> | undefined
  const queueOf = async () => {
    const { fleet: service } = await openFleet(cli)
    return service.queue(database)
  }
  return {
    async send(request) {
      try {
        return await sendControl(request)
      } catch (error) {
        if (database === undefined || !(error instanceof ControlUnavailable) || error.code !== 'CONTROL_NOT_HELD') throw error
      }
      try {
        return await (await (fleet ??= queueOf())).control(request)
      } catch (error) {
        if (error instanceof ControlUnavailable) throw error
        throw fleetHostError(error)
      }
    },
  }
}
