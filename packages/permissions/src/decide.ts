import type { ToolDefinition, ToolKind } from '@goalkeeper/tools'
import type { PermissionMode, ToolClass } from './config.ts'
import { strongestRule, type CompiledRule } from './rules.ts'

/** What the mode and the rules say about one call, before anyone is asked. */
export type Decision =
  | { kind: 'allow'; by: 'mode' | 'rule' }
  | { kind: 'ask'; why: string }
  | { kind: 'deny'; reason: string }

const WHAT: Record<ToolClass, string> = {
  read: 'reads the workspace',
  write: 'changes files',
  command: 'runs a command',
  session: 'changes only the session',
  other: 'is not one of the workspace tools, so what it does is not known',
}

/** Which calls each mode lets through without asking. */
const ALLOWED: Record<PermissionMode, readonly ToolClass[]> = {
  'read-only': ['read', 'session'],
  // Commands: the sandbox confines them (or, without one, the tool refuses them).
  'workspace-write': ['read', 'session', 'write', 'command'],
  full: ['read', 'session', 'write', 'command', 'other'],
}

/** The class each kind of tool is judged as: reading and searching read, edits write, `execute` runs commands. */
const KIND_CLASSES: Record<ToolKind, ToolClass> = {
  read: 'read',
  search: 'read',
  edit: 'write',
  execute: 'command',
  session: 'session',
  other: 'other',
}

/** A kind outside `TOOL_KINDS` (a plain-JavaScript tool registered around the check) counts as `other`. */
export const classOfKind = (kind: ToolKind | undefined): ToolClass => (kind && Object.hasOwn(KIND_CLASSES, kind) ? KIND_CLASSES[kind] : 'other')

/** The configured `classes` first (the user's word on a tool), then what the tool declares. */
export function classify(tool: Pick<ToolDefinition, 'name' | 'kind'>, classes: Readonly<Record<string, ToolClass>>): ToolClass {
  return (Object.hasOwn(classes, tool.name) ? classes[tool.name] : undefined) ?? classOfKind(tool.kind)
}

export function decide(
  mode: PermissionMode, rules: readonly CompiledRule[], classes: Readonly<Record<string, ToolClass>>,
  tool: Pick<ToolDefinition, 'name' | 'kind'>, args: Readonly<Record<string, unknown>>,
): Decision {
  const rule = strongestRule(rules, tool.name, args)
  if (rule?.action === 'deny') return { kind: 'deny', reason: rule.reason ?? `the permission rule for ${rule.text} denies it` }
  if (rule?.action === 'ask') return { kind: 'ask', why: `the permission rule for ${rule.text} asks first` }
  if (rule?.action === 'allow') return { kind: 'allow', by: 'rule' }
  const kind = classify(tool, classes)
  if (ALLOWED[mode].includes(kind)) return { kind: 'allow', by: 'mode' }
  return { kind: 'ask', why: `${tool.name} ${WHAT[kind]}, which the ${mode} permission mode does not allow without asking` }
}
