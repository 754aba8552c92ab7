// Every text of messages.ts with sample values, as file snapshots: a change of wording is a one-line diff
// in __snapshots__/messages.test.ts.snap, reviewed with the change.
import { describe, expect, it } from 'vitest'
import { blockText, escalationText, hintText, stopText } from '../src/messages.ts'
import type { LoopFinding } from '../src/types.ts'

const read = { name: 'read', arguments: '{"path":"src/index.ts"}', json: true }
const shell = { name: 'run_command', arguments: '{"command":"npm test -- --watch=false --reporter=dot"}', json: true }
const broken = { name: 'write', arguments: '{"path": "a.txt", "content": ', json: false }

const findings: Record<string, LoopFinding> = {
  'repeat, same result': { kind: 'repeat', level: 'soft', count: 3, calls: [read], sameResult: true },
  'repeat, near-identical': { kind: 'repeat', level: 'soft', count: 4, calls: [read], sameResult: false, nearIdentical: true },
  'poll with a limit': { kind: 'poll', level: 'soft', count: 5, calls: [shell], sameResult: false, limit: 12 },
  'poll without a limit': { kind: 'poll', level: 'hard', count: 1, calls: [shell], sameResult: false, limit: 0 },
  'same error': {
    kind: 'same-error', level: 'hard', count: 2, calls: [broken], sameResult: false,
    error: { code: 'INVALID_ARGUMENTS', message: 'arguments are not valid JSON.\n  at position 30.' },
  },
  'cycle': { kind: 'cycle', level: 'soft', count: 6, calls: [read, shell], sameResult: true },
  'block': { kind: 'block', level: 'hard', count: 8, calls: [read, shell, read], sameResult: true, repetition: 2 },
}

describe('loop-guard messages', () => {
  for (const [name, finding] of Object.entries(findings)) {
    it(name, () => {
      expect(hintText(finding, 40)).toMatchSnapshot('hint')
      expect(escalationText(finding, 40)).toMatchSnapshot('escalation')
      expect(blockText(finding, 40)).toMatchSnapshot('block')
      expect(blockText(finding, 40, 'the user decided\nto stop')).toMatchSnapshot('block with a decision')
      expect(stopText(finding, 40)).toMatchSnapshot('stop')
      expect(stopText(finding, 40, 'over budget')).toMatchSnapshot('stop with a decision')
    })
  }
})
