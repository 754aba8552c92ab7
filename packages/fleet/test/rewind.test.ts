// What a session's records say its workspace holds (recordedWorkspace), in particular a rewind whose notice
// the model never read: the run that made it stopped before another turn started (a cut connection), so the
// next run must tell it again, or the model goes on believing the undone work is there.
import { expect, it } from 'vitest'
import { recordedWorkspace } from '@goalkeeper/fleet'
import type { SessionRecord } from '@goalkeeper/session'

const records = (...items: [string, unknown][]): SessionRecord[] => items.map(([type, data], seq) => ({ seq, at: seq, type, data }))
const claim = (commit: string) => ['fleet/claim', { worker: 'w', job: 'j', attempt: 0, takeover: true, rearmed: true, commit }] as [string, unknown]
const rewind = { worker: 'w-b', commit: 'c0', round: 0, lostTurns: [1], lostRounds: [1], dropped: 'c1' }

it('turns after the last recorded commit are not on the branch; a rewind no turn followed is still to be told', () => {
  expect(recordedWorkspace(records(claim('c0'), ['turn/start', { turn: 1 }], ['fleet/push', { worker: 'w', branch: 'b', commit: 'c1', round: 1 }], ['turn/start', { turn: 2 }])))
    .toEqual({ commit: 'c1', round: 1, turnsAfter: [2] })

  // The run that rewound stopped before its next turn: the notice is still untold after the next claim.
  const untold = records(claim('c0'), ['turn/start', { turn: 1 }], claim('c0'), ['fleet/rewind', rewind], ['fleet/push', { worker: 'w-b', branch: 'b', commit: 'c0', round: 0 }], claim('c0'))
  expect(recordedWorkspace(untold)).toEqual({ commit: 'c0', round: 0, turnsAfter: [], untold: rewind })

  // A turn after the rewind took its notice (steered messages are recorded in the next turn).
  expect(recordedWorkspace([...untold, { seq: 9, at: 9, type: 'turn/start', data: { turn: 2 } }])).toEqual({ commit: 'c0', round: 0, turnsAfter: [2] })
})
