// Every text of messages.ts with sample values, as file snapshots: a change of wording is a one-line diff
// in __snapshots__/messages.test.ts.snap, reviewed with the change.
import { describe, expect, it } from 'vitest'
import { blockText, escalationText, hintText, stopText } from '../src/messages.ts'
import type { IdleFinding } from '../src/types.ts'

const progressTools = ['write', 'edit', 'run_command']
const readTools = ['read', 'grep']

const findings: Record<string, IdleFinding> = {
  'idle rounds': {
    kind: 'idle-rounds', level: 'stop', replies: [],
    rounds: [
      { round: 4, calls: 0, text: 'I will now look at the tests and then   decide what to change next in the parser module.' },
      { round: 5, calls: 1, text: '' },
      { round: 6, calls: 3, text: '', stepLimit: true },
    ],
  },
  'idle rounds, the last one redone': {
    kind: 'idle-rounds', level: 'stop', replies: [],
    rounds: [{ round: 2, calls: 1, text: 'Still investigating.' }, { round: 3, calls: 1, text: 'Still investigating.' }, { round: 4, calls: 1, text: '', redone: true }],
  },
  'one idle round': { kind: 'idle-rounds', level: 'hint', replies: [], rounds: [{ round: 2, calls: 0, text: 'Done.' }] },
  'monologue, same text': { kind: 'monologue', level: 'hint', rounds: [], replies: ['Let me check.', 'Let me check.', 'Let me check.'] },
  'monologue, similar text': { kind: 'monologue', level: 'stop', rounds: [], replies: ['Let me check.', 'Let me check again.'] },
  'monologue, empty': { kind: 'monologue', level: 'stop', rounds: [], replies: ['', '', ''] },
  'echo': { kind: 'echo', level: 'hint', rounds: [], replies: ['Searching for the config loader.'], steps: 4, calls: 7 },
}

describe('no-progress messages', () => {
  for (const [name, finding] of Object.entries(findings)) {
    it(name, () => {
      expect(hintText(finding, progressTools, 3, readTools)).toMatchSnapshot('hint')
      expect(hintText(finding, ['write'], 1)).toMatchSnapshot('hint, one progress tool, no read tools')
      expect(escalationText(finding, progressTools, readTools)).toMatchSnapshot('escalation')
      expect(blockText(finding, progressTools, readTools)).toMatchSnapshot('block')
      expect(blockText(finding, progressTools, readTools, 'no progress in three rounds')).toMatchSnapshot('block with a decision')
      expect(stopText(finding, progressTools, readTools)).toMatchSnapshot('stop')
      expect(stopText(finding, progressTools, readTools, 'stopped by the user')).toMatchSnapshot('stop with a decision')
    })
  }
})
