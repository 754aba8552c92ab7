// The unified diff the CLI prints for an edit: the line match, the headers, the cap and the colours.
import { describe, expect, it } from 'vitest'
import { diffCounts, MAX_DIFF_LINES, unifiedDiff } from '../src/commands/render/diff.ts'

describe('unifiedDiff', () => {
  it('keeps common lines as context and marks removed and added ones', () => {
    const diff = { path: 'a.ts', oldText: 'one\ntwo\nthree\n', newText: 'one\n2\nthree\nfour\n' }
    expect(unifiedDiff(diff, false)).toEqual(['--- a/a.ts', '+++ b/a.ts', '@@ -1,3 +1,4 @@', ' one', '-two', '+2', ' three', '+four'])
    expect(diffCounts(diff)).toEqual({ added: 2, removed: 1 })
  })

  it('a new file comes from /dev/null, every line added', () => {
    const diff = { path: 'n.txt', oldText: null, newText: 'x' }
    expect(unifiedDiff(diff, false)).toEqual(['--- /dev/null', '+++ b/n.txt', '@@ -0,0 +1 @@', '+x'])
    expect(diffCounts(diff)).toEqual({ added: 1, removed: 0 })
  })

  it('a long change is cut after MAX_DIFF_LINES lines with a count of the rest', () => {
    const newText = Array.from({ length: MAX_DIFF_LINES + 5 }, (_, i) => `line ${i}`).join('\n')
    const lines = unifiedDiff({ path: 'big', oldText: null, newText }, false)
    expect(lines).toHaveLength(3 + MAX_DIFF_LINES + 1)
    expect(lines.at(-1)).toBe('[… 5 more diff lines]')
  })

  it('colours removed lines red and added lines green, context plain', () => {
    const lines = unifiedDiff({ path: 'a', oldText: 'a\nb', newText: 'a\nc' }, true)
    expect(lines.slice(3)).toEqual([' a', '\x1b[31m-b\x1b[0m', '\x1b[32m+c\x1b[0m'])
  })
})
