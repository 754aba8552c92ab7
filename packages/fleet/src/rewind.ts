import type { Agent } from '@goalkeeper/agent-loop'
import type { GoalService } from '@goalkeeper/goal'
import { checkpointPart, isRecordOf, type SessionRecord } from '@goalkeeper/session'
import type { GitWorkspace } from './git.ts'
import type { FleetRecordData } from './records.ts'

/** What a session says its workspace holds: the last commit it recorded, and the turns that came after it. */
export interface RecordedWorkspace {
  /** The last commit recorded (`fleet/push`, `fleet/claim`, `fleet/rewind`); undefined for a session that recorded none. */
  commit?: string
  /** The goal round whose work that commit holds (0 when it is the claim's starting point or unknown). */
  round: number
  /** Turns started after that record: the branch holds none of what they changed. */
  turnsAfter: number[]
  /**
   * The last `fleet/rewind` when no turn started after it: the model may never have read its notice (it goes
   * with the next turn's records, and the run that made it stopped before one), so the next run tells it again.
   */
  untold?: Rewind
}

/** The fleet's part of a session checkpoint: a session opened from it knows its last commit without the records before. */
export const CHECKPOINT_PART = 'fleet'

/**
 * Reads the last recorded commit of a session's records, the turns started after it, and a rewind no turn
 * followed. A checkpoint carries what the records before it said, so a session opened from its last
 * checkpoint reads the same.
 */
export function recordedWorkspace(records: readonly SessionRecord[]): RecordedWorkspace {
  let found: RecordedWorkspace = { round: 0, turnsAfter: [] }
  for (const record of records) {
    const carried = checkpointPart<RecordedWorkspace>(record, CHECKPOINT_PART)
    if (carried) found = { ...carried, turnsAfter: [...carried.turnsAfter] }
    else if (isRecordOf(record, 'fleet/rewind')) {
      found = { commit: record.data.commit, round: record.data.round, turnsAfter: [], untold: record.data }
    } else if (isRecordOf(record, 'fleet/push') || (isRecordOf(record, 'fleet/claim') && record.data.commit)) {
      // A rewind's notice stays untold through later claims and pushes, until a turn takes it.
      const round = isRecordOf(record, 'fleet/push') ? record.data.round : 0
      found = { commit: record.data.commit, round, turnsAfter: [], ...(found.untold ? { untold: found.untold } : {}) }
    } else if (isRecordOf(record, 'turn/start')) {
      found.turnsAfter.push(record.data.turn)
      delete found.untold
    }
  }
  return found
}

/** The rewind a takeover made: what `fleet/rewind` records and the model is told. */
export type Rewind = FleetRecordData['fleet/rewind']

/**
 * Makes the workspace of a taken-over goal what its session recorded: the workspace and the branch go back
 * to the last recorded commit, whatever a dead worker did after it (turns it ran but whose push it never
 * recorded, a push that landed unrecorded). Resolves to the rewind when anything was undone, else undefined.
 */
export async function rewindToSession(goals: GoalService, agent: Agent, workspace: GitWorkspace, worker: string): Promise<Rewind | undefined> {
  const records = agent.session.records
  const recorded = recordedWorkspace(records)
  const { commit, turnsAfter } = recorded
  // A session from before commits were recorded: nothing to compare the branch with.
  if (!commit) return undefined
  const dropped = await workspace.rewind(commit)
  if (!turnsAfter.length && !dropped) {
    // Nothing undone now, but an earlier rewind's notice may never have reached the model: it is told again.
    if (!recorded.untold) return undefined
    const { dropped: _, ...told } = recorded.untold
    return { ...told, worker }
  }
  const roundOf = (turn: number) => goals.roundOf(agent, turn)?.round
  const lostRounds = turnsAfter.map(roundOf).filter((round): round is number => round !== undefined)
  const lost = new Set(turnsAfter)
  const kept = records.flatMap((record) => (isRecordOf(record, 'turn/start') && !lost.has(record.data.turn) ? [roundOf(record.data.turn) ?? 0] : []))
  return { worker, commit, round: Math.max(recorded.round, ...kept), lostTurns: turnsAfter, lostRounds, ...(dropped ? { dropped } : {}) }
}

/** What the model is told of the work a rewind undid, before its next round. */
export function rewindNotice(rewind: Rewind): string {
  const what = rewind.lostRounds.length
    ? `${rewind.lostRounds.length === 1 ? 'round' : 'rounds'} ${rewind.lostRounds.join(', ')} of the goal`
    : `${rewind.lostTurns.length === 1 ? 'turn' : 'turns'} ${rewind.lostTurns.join(', ')}`
  return [
    '<workspace_rewound>',
    `The work of ${what} was lost: the process running them stopped before their changes were saved.`,
    `The workspace is back at the end of round ${rewind.round} (commit ${rewind.commit.slice(0, 12)}). Whatever those turns changed in it is gone,`,
    'even where the messages above say a file was written or a check passed. Check the workspace and redo what is missing.',
    '</workspace_rewound>',
  ].join('\n')
}
