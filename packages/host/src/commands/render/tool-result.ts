import { isRecord } from '@goalkeeper/kit'
import type { ToolCallInfo } from '@goalkeeper/agent-loop'
import type { ToolDefinition, ToolDiff, ToolResult } from '@goalkeeper/tools'
import { describeCounts, diffCounts, unifiedDiff } from './diff.ts'
import { keepEnd } from './text.ts'

/** run_command's closing line, the one place its exit code is told (a failed command is reported as a failure). */
const EXIT_CODE = /\[Exit code (\d+) after [\d.]+ s/

/** The arguments a call ran with: the last rewrite's, else the model's; undefined when they are not a JSON object. */
export function argumentsRun(call: Pick<ToolCallInfo, 'arguments'>, result: Pick<ToolResult, 'rewrites'>): Record<string, unknown> | undefined {
  try {
    const args: unknown = JSON.parse(result.rewrites?.at(-1)?.arguments ?? call.arguments)
    return isRecord(args) ? args : undefined
  } catch {
    return undefined
  }
}

/** The change a call made, as its tool tells it; the tool's describer is a plugin's code, so it may throw or return junk. */
export function changeOf(tool: ToolDefinition | undefined, call: Pick<ToolCallInfo, 'arguments'>, result: ToolResult): ToolDiff | undefined {
  if (!tool?.diff) return undefined
  try {
    const args = argumentsRun(call, result)
    if (!isRecord(args)) return undefined
    const diff = tool.diff(args, result)
    const valid = diff && typeof diff.path === 'string' && typeof diff.newText === 'string' && (diff.oldText === null || typeof diff.oldText === 'string')
    return valid ? diff : undefined
  } catch {
    return undefined
  }
}

/**
 * The lines for a successful call: `  ok NAME`, with the lines it changed and its unified diff (indented) when
 * its tool tells the change, or the exit code of a command. With a `width`, a path too long for it keeps
 * its end.
 */
export function describeToolResult(
  tool: ToolDefinition | undefined, call: ToolCallInfo, result: ToolResult, colour: boolean, width?: number,
): string[] {
  const diff = changeOf(tool, call, result)
  if (diff) {
    const head = keepEnd(`  ok ${call.name} `, diff.path, `: ${describeCounts(diffCounts(diff))} lines`, width)
    return [head, ...unifiedDiff(diff, colour).map((line) => `    ${line}`)]
  }
  const exit = EXIT_CODE.exec(result.content.slice(-400))
  return [`  ok ${call.name}${exit ? `: exit code ${exit[1]}` : ''}`]
}
