import { existsSync } from 'node:fs'
import path from 'node:path'
import type { Agent } from '@goalkeeper/agent-loop'
import type { FleetRecordData, GoalHandle, GoalOutcome, StopReason } from '@goalkeeper/fleet'
import { Config as FleetConfig } from '@goalkeeper/fleet'
import { isSettled, type GoalState } from '@goalkeeper/goal'
import { interruptWork } from '@goalkeeper/goal-session'
import { describeError } from '@goalkeeper/kit'
import type { BuiltinPlugins } from '@goalkeeper/loader'
import { type App, startApp } from '../../app.ts'
import { builtinPlugins } from '../../builtins.ts'
import type { CommandContext } from '../../command.ts'
import { DATABASE_VARIABLE } from '../lookup/database.ts'
import { PERMISSIONS_VARIABLE } from '../lookup/permissions.ts'

/** Inside a goal's own composition the fleet entry does nothing: the worker around it is the fleet. */
const goalBuiltins: BuiltinPlugins = {
  ...builtinPlugins,
  '@goalkeeper/fleet': async () => ({ name: 'fleet', Config: FleetConfig, apply: () => {} }),
}

class PermanentError extends Error {
  readonly permanent = true
}

/**
 * Runs one job's goal in its workspace: the workspace's cordis.yml (or the worker's composition), the
 * job's session (created, or reopened and re-armed), one commit and push per round, until the goal is
 * settled or the worker stops it.
 */
export async function runGoal(cli: CommandContext, handle: GoalHandle, database: string | undefined): Promise<GoalOutcome> {
  const { job, workspace } = handle
  const note = (line: string) => cli.note(`goal ${handle.id}: ${line}`)
  const own = path.join(workspace.dir, 'cordis.yml')
  const config = existsSync(own) ? own : cli.globals.config
  const env = {
    ...process.env,
    // The goal's session store reads it (the default cordis.yml's session entry does).
    ...(database ? { [DATABASE_VARIABLE]: database } : {}),
    ...(cli.globals.permissions ? { [PERMISSIONS_VARIABLE]: cli.globals.permissions } : {}),
  }
  let app: App
  try {
    app = await startApp({ config, cwd: workspace.dir, logLevel: cli.globals.logLevel, stderr: cli.io.stderr, signals: false, env, builtins: goalBuiltins, reportsFailedEntries: true })
  } catch (error) {
    throw new PermanentError(`the composition ${config} does not load: ${describeError(error)}`)
  }
  try {
    const failed = app.report.entries.filter((entry) => entry.status === 'failed')
    if (failed.length) throw new PermanentError(`${config}: ${failed.map((entry) => `${entry.id}: ${entry.error}`).join('; ')}`)
    const sessions = app.ctx.get('sessions')
    const agents = app.ctx.get('agents')
    const goals = app.ctx.get('goals')
    const driver = app.ctx.get('goalDriver')
    if (!sessions || !agents || !goals || !driver) {
      throw new PermanentError(`${config} does not load the session, agent-loop, goal and goal-session plugins a goal needs`)
    }
    if (database && !sessions.dir.startsWith('postgres')) {
      note(`sessions are kept in ${sessions.dir}, not in the database: only workers that share that directory can take this goal over (give the session entry \`database: \${${DATABASE_VARIABLE}:-}\`)`)
    }
    let agent: Agent
    let takeover = true
    try {
      agent = await agents.resume(job.sessionId)
    } catch (error) {
      if ((error as { code?: string }).code !== 'SESSION_NOT_FOUND') throw error
      takeover = false
      agent = await agents.create({ session: await sessions.create({ cwd: workspace.dir, id: job.sessionId }) })
    }
    const append = <K extends keyof FleetRecordData>(type: K, data: FleetRecordData[K]) => agent.session.append(type, data)
    note(`session ${agent.id} (${takeover ? 'resumed' : 'new'}) in ${workspace.dir}${workspace.resumed ? ` from ${workspace.branch}` : ''}`)
    // As `run` says which composition it loaded when it is not the workspace's own, the worker says when it is.
    if (config === own) note(`composed by the workspace's cordis.yml`)
    const loaded = takeover ? goals.get(agent) : undefined
    if (!takeover || !loaded) {
      append('fleet/claim', { worker: handle.worker, job: handle.id, attempt: handle.attempt, takeover, rearmed: false })
      goals.create(agent, {
        objective: job.objective,
        ...(job.maxRounds !== undefined ? { maxGoalRounds: job.maxRounds } : {}),
        ...(job.budgets ? { budgets: job.budgets } : {}),
        ...(job.verify ? { verify: job.verify } : {}),
      })
    } else if (isSettled(loaded)) {
      // The last worker finished the goal but not the job: nothing to re-arm.
      append('fleet/claim', { worker: handle.worker, job: handle.id, attempt: handle.attempt, takeover, rearmed: false, phase: loaded.phase })
    } else {
      // A goal always loads disarmed; the job is the standing instruction to pursue it, so it is re-armed here.
      append('fleet/claim', { worker: handle.worker, job: handle.id, attempt: handle.attempt, takeover, rearmed: true, phase: loaded.phase })
      note(`took over the goal (${loaded.phase}, ${loaded.roundsStarted}/${loaded.maxGoalRounds} rounds) and re-armed it`)
      goals.resume(agent, { id: loaded.id, revision: loaded.revision })
    }
    await sessions.flush(agent.session)

    const save = async () => {
      const goal = goals.get(agent)
      const round = goal?.roundsStarted ?? 0
      const before = workspace.pushed
      const commit = await workspace.save(`goalkeeper: round ${round} of session ${agent.id}`)
      if (commit && commit !== before) append('fleet/push', { worker: handle.worker, branch: workspace.branch, commit, round })
      await sessions.flush(agent.session)
      handle.progress({ rounds: round, ...(goal ? { phase: goal.phase } : {}) })
    }
    let saving: Promise<void> = Promise.resolve()
    let saveError: unknown
    const queueSave = () => {
      saving = saving.then(save).catch((error) => void (saveError ??= error))
      return saving
    }
    // Each round ends with the agent idle: its changes are committed and pushed before the next one starts.
    const stopSaves = app.ctx.on('agent/status', (which: Agent, status: string) => {
      if (which === agent && status === 'idle') void queueSave()
    })
    // The next round starts only once the last one is pushed: a worker that dies mid-round leaves a branch
    // holding every round its session records as done, and the worker taking over continues from there.
    const stopWaits = app.ctx.on('agent/prompt-submit', async (which: Agent, _submission: unknown, next: () => Promise<any>) => {
      if (which === agent) await saving
      return next()
    })

    let stopReason: StopReason | undefined
    void handle.stopping.then((reason) => {
      stopReason = reason
      if (reason === 'drain') {
        const action = interruptWork(agent, goals)
        if (action) note(action === 'cancelled' ? 'draining: cancelled the running round' : 'draining: paused the goal')
      }
    })
    // Until the goal's rounds stop; a job lost to another worker ends the wait whatever the goal does.
    const lost = new Promise<'lost'>((resolve) => void handle.stopping.then((reason) => reason === 'lost' && resolve('lost')))
    const settled = driver.whenSettled(agent).then(() => (agent.disposed ? 'lost' : 'rest') as 'lost' | 'rest')
    const state = await Promise.race([settled, lost])
    stopSaves()
    stopWaits()
    if (stopReason === 'lost' || state === 'lost') return { kind: 'lost' }
    await queueSave()
    if (saveError) throw saveError
    const goal = goals.get(agent)
    const output = { phase: goal?.phase ?? 'none', rounds: goal?.roundsStarted ?? 0 }
    if (stopReason === 'drain' && goal && !isSettled(goal)) {
      append('fleet/release', { worker: handle.worker, job: handle.id, phase: goal.phase, rounds: goal.roundsStarted })
      await sessions.flush(agent.session)
      return { kind: 'returned', output }
    }
    return { kind: 'done', output: { ...output, session: agent.id, branch: workspace.branch, commit: workspace.pushed ?? null, worker: handle.worker, ...spendOf(goal) } }
  } finally {
    await app.shutdown()
  }
}

function spendOf(goal: GoalState | undefined): Record<string, unknown> {
  const usage = (goal as { usage?: unknown } | undefined)?.usage
  return usage ? { spend: usage } : {}
}
