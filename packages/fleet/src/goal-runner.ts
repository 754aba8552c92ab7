import { existsSync } from 'node:fs'
import type { Context } from 'cordis'
import path from 'node:path'
import type { Agent, AgentService } from '@goalkeeper/agent-loop'
import { applyControl, Approvals } from '@goalkeeper/control'
import { describeGoalStatus, isSettled, type GoalService, type GoalState } from '@goalkeeper/goal'
import { interruptWork, type GoalDriver } from '@goalkeeper/goal-session'
import { describeError } from '@goalkeeper/kit'
import type { BuiltinPlugins } from '@goalkeeper/loader'
import type { SessionService } from '@goalkeeper/session'
import { isConnectionLoss } from '@goalkeeper/session-postgres'
import { Config as FleetConfig } from './config.ts'
import type { GoalApp, GoalRunnerOptions } from './goal-app.ts'
import type { GitWorkspace } from './git.ts'
import type { FleetRecordData } from './records.ts'
import * as roundCommit from './round-commit.ts'
import { type Rewind, rewindNotice, rewindToSession } from './rewind.ts'
import type { GoalHandle, GoalOutcome, StopReason } from './worker.ts'

interface GoalServices {
  sessions: SessionService
  agents: AgentService
  goals: GoalService
  driver: GoalDriver
}

class PermanentError extends Error {
  readonly permanent = true
}

/**
 * Runs one job's goal in its workspace: the workspace's cordis.yml (or the worker's composition), the
 * job's session (created, or reopened and re-armed), one commit and push per round, until the goal is
 * settled or the worker stops it.
 */
export async function runGoal(handle: GoalHandle, options: GoalRunnerOptions): Promise<GoalOutcome> {
  const { workspace } = handle
  const note = (line: string) => options.note(`goal ${handle.id}: ${line}`)
  const own = path.join(workspace.dir, 'cordis.yml')
  const config = existsSync(own) ? own : options.config
  const app = await composeGoal(config, workspace, options)
  try {
    const services = goalServices(app, config)
    if (options.databaseVariable && !services.sessions.dir.startsWith('postgres')) {
      note(`sessions are kept in ${services.sessions.dir}, not in the database: only workers that share that directory can take this goal over (give the session entry \`database: \${${options.databaseVariable}:-}\`)`)
    }
    // A condition goal without a judge would never complete by its condition: refused before anything is claimed.
    if (handle.job.until !== undefined && !app.ctx.get('goalJudge')) {
      throw new PermanentError(`the goal is defined by a condition (submit --until), but ${config} does not load the goal-judge plugin that decides it`)
    }
    const { agent, takeover } = await openSession(services, handle)
    note(`session ${agent.id} (${takeover ? 'resumed' : 'new'}) in ${workspace.dir}${workspace.resumed ? ` from ${workspace.branch}` : ''}`)
    // As `run` says which composition it loaded when it is not the workspace's own, the worker says when it is.
    if (config === own) note(`composed by the workspace's cordis.yml`)
    // Before anything is claimed: the workspace becomes what the session recorded, whatever a dead worker left.
    const rewind = takeover ? await rewindToSession(services.goals, agent, workspace, handle.worker) : undefined
    claimGoal(services.goals, agent, handle, { takeover, commit: await workspace.head(), rewind }, note)
    await services.sessions.flush(agent.session)
    return await pursueGoal(app, services, agent, handle, note)
  } finally {
    await app.shutdown()
  }
}

/** Inside a goal's own composition the fleet entry does nothing: the worker around it is the fleet. */
function goalBuiltins(builtins: BuiltinPlugins): BuiltinPlugins {
  return { ...builtins, '@goalkeeper/fleet': async () => ({ name: 'fleet', Config: FleetConfig, apply: () => {} }) }
}

async function composeGoal(config: string, workspace: GitWorkspace, options: GoalRunnerOptions): Promise<GoalApp> {
  try {
    return await options.startApp({ config, cwd: workspace.dir, builtins: goalBuiltins(options.builtins) })
  } catch (error) {
    throw new PermanentError(`the composition ${config} does not load: ${describeError(error)}`)
  }
}

/** The services a goal needs; a composition that fails an entry or lacks one fails the job for good. */
function goalServices(app: GoalApp, config: string): GoalServices {
  const failed = app.report.entries.filter((entry) => entry.status === 'failed')
  if (failed.length) {
    const message = `${config}: ${failed.map((entry) => `${entry.id}: ${entry.error}`).join('; ')}`
    // A store that could not reach its database (the queue's, just used: a restart, a dropped connection)
    // is tried again later; any other failed entry fails the job for good.
    throw failed.every((entry) => isConnectionLoss({ message: entry.error })) ? new Error(message) : new PermanentError(message)
  }
  const sessions = app.ctx.get('sessions')
  const agents = app.ctx.get('agents')
  const goals = app.ctx.get('goals')
  const driver = app.ctx.get('goalDriver')
  if (!sessions || !agents || !goals || !driver) {
    throw new PermanentError(`${config} does not load the session, agent-loop, goal and goal-session plugins a goal needs`)
  }
  return { sessions, agents, goals, driver }
}

/** The job's session: reopened when a worker ran it before (a takeover), else created with the job's id. */
async function openSession({ sessions, agents }: GoalServices, { job, workspace }: GoalHandle): Promise<{ agent: Agent; takeover: boolean }> {
  try {
    return { agent: await agents.resume(job.sessionId), takeover: true }
  } catch (error) {
    if ((error as { code?: string }).code !== 'SESSION_NOT_FOUND') throw error
    return { agent: await agents.create({ session: await sessions.create({ cwd: workspace.dir, id: job.sessionId }) }), takeover: false }
  }
}

const append = <K extends keyof FleetRecordData>(agent: Agent, type: K, data: FleetRecordData[K]) => agent.session.append<keyof FleetRecordData>(type, data)

/**
 * Records the claim (and the rewind a takeover made), then creates the goal, re-arms the loaded one, or
 * leaves a settled one as it is. A goal completed in turns the rewind undid is pursued anew: its
 * completion rested on work the workspace no longer holds.
 */
function claimGoal(goals: GoalService, agent: Agent, handle: GoalHandle, start: { takeover: boolean; commit: string; rewind?: Rewind }, note: (line: string) => void): void {
  const { job } = handle
  const { takeover, commit, rewind } = start
  const loaded = takeover ? goals.get(agent) : undefined
  const claim = { worker: handle.worker, job: handle.id, attempt: handle.attempt, takeover, commit }
  const reopen = loaded?.phase === 'complete' && !!rewind?.lostTurns.length
  // `rounds`: whether rounds run after the claim (a settled goal's job only ends, no model reads a notice).
  const told = (rounds: boolean) => {
    if (!rewind) return
    append(agent, 'fleet/rewind', rewind)
    const undone = rewind.lostRounds.length ? `round${rewind.lostRounds.length === 1 ? '' : 's'} ${rewind.lostRounds.join(', ')}` : `turn${rewind.lostTurns.length === 1 ? '' : 's'} ${rewind.lostTurns.join(', ')}`
    note(`the branch did not hold ${rewind.lostTurns.length ? `the work of ${undone}` : `what the session recorded`}: reset the workspace to ${rewind.commit.slice(0, 12)} (round ${rewind.round})${rewind.dropped ? `, dropping ${rewind.dropped.slice(0, 12)}` : ''}`)
    // The model reads this before its next round: the records of the undone turns stay in its history.
    if (rounds && rewind.lostTurns.length) agent.steer({ content: rewindNotice(rewind), source: { kind: 'plugin', name: 'fleet' } })
  }
  if (!takeover || !loaded || reopen) {
    append(agent, 'fleet/claim', { ...claim, rearmed: false, ...(loaded ? { phase: loaded.phase } : {}) })
    told(true)
    if (reopen) note('the goal was completed in the undone work: pursuing it again')
    goals.create(agent, {
      objective: job.objective,
      ...(job.maxRounds !== undefined ? { maxGoalRounds: job.maxRounds } : {}),
      ...(job.budgets ? { budgets: job.budgets } : {}),
      ...(job.verify ? { verify: job.verify } : {}),
      ...(job.until === undefined ? {} : { until: job.until }),
    })
  } else if (isSettled(loaded)) {
    // The last worker finished the goal but not the job: nothing to re-arm.
    append(agent, 'fleet/claim', { ...claim, rearmed: false, phase: loaded.phase })
    told(false)
  } else {
    // A goal always loads disarmed; the job is the standing instruction to pursue it, so it is re-armed here.
    append(agent, 'fleet/claim', { ...claim, rearmed: true, phase: loaded.phase })
    told(true)
    note(`took over the goal (${loaded.phase}, ${loaded.roundsStarted}/${loaded.maxGoalRounds} rounds) and re-armed it`)
    goals.resume(agent, { id: loaded.id, revision: loaded.revision })
  }
}

/**
 * Lets the rounds run, each committed and pushed by the round-commit plugin, until the goal is at rest or
 * the job is lost; then commits what is left and tells the worker how the job ends.
 */
async function pursueGoal(app: GoalApp, services: GoalServices, agent: Agent, handle: GoalHandle, note: (line: string) => void): Promise<GoalOutcome> {
  const { goals, driver } = services
  const target = { agent, workspace: handle.workspace, worker: handle.worker, progress: handle.progress }
  let commitError: unknown
  const commits = await app.ctx.plugin(roundCommit, { ...target, failed: (error: unknown) => void (commitError ??= error) })
  // Controls sent through the database (the board, `goalkeeper pause --database`) go through the same code
  // as the control plugin's socket, on this goal's composition; approvals are not taken over the database.
  const approvals = new Approvals()
  let scoped!: Context
  const controls = await app.ctx.plugin({ name: 'fleet-control', inject: ['agents', 'goals'], apply: (ctx: Context) => void (scoped = ctx) })
  const unregister = handle.controls(agent.id, (request) => ({ ...applyControl(scoped, approvals, request, false), worker: handle.worker }))
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
  const state = await Promise.race([settled, lost]).finally(unregister)
  await controls.dispose()
  await commits.dispose()
  if (stopReason === 'lost' || state === 'lost') return { kind: 'lost' }
  await roundCommit.commitRound(services, target).catch((error) => void (commitError ??= error))
  if (commitError) throw commitError
  return jobOutcome(services, agent, handle, stopReason)
}

/** The job done with the goal's result, or, after a drain that paused the goal, returned to the queue. */
async function jobOutcome({ sessions, goals }: GoalServices, agent: Agent, handle: GoalHandle, stopReason: StopReason | undefined): Promise<GoalOutcome> {
  const { workspace } = handle
  const goal = goals.get(agent)
  const output = { phase: goal?.phase ?? 'none', rounds: goal?.roundsStarted ?? 0 }
  if (stopReason === 'drain' && goal && !isSettled(goal)) {
    append(agent, 'fleet/release', { worker: handle.worker, job: handle.id, phase: goal.phase, rounds: goal.roundsStarted })
    await sessions.flush(agent.session)
    return { kind: 'returned', output }
  }
  // Paused by a control (no drain): the job ends as paused, and a resume puts it back in the queue.
  if (stopReason !== 'drain' && goal?.phase === 'paused') {
    await sessions.flush(agent.session)
    return { kind: 'paused', output }
  }
  // Active but disarmed with no drain: the driver stopped the rounds itself (a session flush failed, as when
  // the database dropped the connection). Nothing was decided; the job is tried again, and the next run
  // re-arms the goal from what the session holds.
  if (goal?.phase === 'active' && goal.activation === 'disarmed' && stopReason !== 'drain') {
    throw Object.assign(new Error(`the goal's rounds stopped while it was still active (a session write failed); it is tried again`), { code: 'GOAL_INTERRUPTED' })
  }
  // What a complete goal stood on (checks, the judge), or why it is not complete: kept with the job.
  return { kind: 'done', output: { ...output, ...(goal ? { status: describeGoalStatus(goal) } : {}), session: agent.id, branch: workspace.branch, commit: workspace.pushed ?? null, worker: handle.worker, ...spendOf(goal) } }
}

function spendOf(goal: GoalState | undefined): Record<string, unknown> {
  const usage = (goal as { usage?: unknown } | undefined)?.usage
  return usage ? { spend: usage } : {}
}
