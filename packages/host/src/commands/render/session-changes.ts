import { isRecordOf, type SessionRecord } from '@goalkeeper/session'
import type { ToolDefinition } from '@goalkeeper/tools'
import { describeCounts, diffCounts, unifiedDiff } from './diff.ts'
import { argumentsRun, changeOf } from './tool-result.ts'

/**
 * What a session changed in its workspace, for chat's `/diff`: the unified diff of every successful call whose
 * tool tells its change, in order; edits whose old text the tool cannot tell (an overwrite) by path; and how
 * many commands ran, whose effects on files no record holds.
 */
export function sessionChanges(records: readonly SessionRecord[], toolOf: (name: string) => ToolDefinition | undefined, colour: boolean): string[] {
  const { changes, files, commands, lines } = changesOf(records, toolOf, colour)
  return [changesLine(changes, files.size, commands), ...lines]
}

/** The edits of `records` as `sessionChanges` prints them, with the counts its first line tells. */
export function changesOf(records: readonly SessionRecord[], toolOf: (name: string) => ToolDefinition | undefined, colour: boolean) {
  const calls = new Map<string, { name: string; arguments: string }>()
  const lines: string[] = []
  const files = new Set<string>()
  let changes = 0
  let commands = 0
  for (const record of records) {
    if (isRecordOf(record, 'tool/call')) calls.set(record.data.callId, record.data)
    if (!isRecordOf(record, 'tool/result') || !record.data.ok) continue
    const call = calls.get(record.data.callId)
    if (!call) continue
    const tool = toolOf(call.name)
    if (tool?.kind === 'execute') commands++
    if (tool?.kind !== 'edit') continue
    const diff = changeOf(tool, call, record.data)
    changes++
    if (diff) {
      files.add(diff.path)
      lines.push(`${call.name} ${diff.path}: ${describeCounts(diffCounts(diff))} lines`, ...unifiedDiff(diff, colour).map((line) => `  ${line}`))
      continue
    }
    const args = argumentsRun(call, record.data)
    const target = typeof args?.path === 'string' ? args.path : 'a file'
    files.add(target)
    lines.push(`${call.name} ${target}: changed; the old text is not recorded, so there is no diff`)
  }
  return { changes, files, commands, lines }
}

/** The first line of `/diff`: how many edits in how many files, and how many commands ran. */
export function changesLine(changes: number, files: number, commands: number): string {
  const ran = commands ? `; ${commands} command${commands === 1 ? '' : 's'} ran, whose changes to files are not tracked` : ''
  if (!changes) return `no file edits in this session${ran}`
  return `${changes} edit${changes === 1 ? '' : 's'} in ${files} file${files === 1 ? '' : 's'}${ran}`
}
