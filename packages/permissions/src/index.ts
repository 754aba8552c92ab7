import type { Context } from 'cordis'
import { probeSandbox } from '@goalkeeper/sandbox'
import type {} from '@goalkeeper/tools'
import { Config, type PermissionsConfig } from './config.ts'
import { compileRules } from './rules.ts'
import { PermissionGate } from './gate.ts'

export { Config, MODES, TOOL_CLASSES, type PermissionMode, type PermissionRule, type ToolClass } from './config.ts'
export { decide, classify, classOfKind, type Decision } from './decide.ts'
export * from './types.ts'

export const name = 'permissions'
// Only events (tool/before-call) and the optional session of each call: no service is needed.
export const inject = []

export const apply = async (ctx: Context, config: PermissionsConfig) => {
  // Before anything is provided: a bad rule fails the load, named by the loader.
  const rules = compileRules(config.rules)
  const sandbox = await probeSandbox(config.bwrap)
  const gate = new PermissionGate(ctx, config, rules, sandbox)
  if (config.mode !== 'full' && !sandbox.available) ctx.logger.warn('no command sandbox: %s; commands are refused in the %s mode', sandbox.reason, config.mode)
  await ctx.effect(function* () {
    // After next(): the final arguments are judged, and only calls no other listener refused are asked about.
    yield ctx.on('tool/before-call', async (review, next) => {
      const verdict = await next()
      return verdict.kind === 'deny' ? verdict : gate.review(review)
    })
    yield ctx.provide('permissions', gate.service)
  }, 'permissions')
}
export { waitingApprovalsFold, type WaitingApproval } from './waiting-fold.ts'
