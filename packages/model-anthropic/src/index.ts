import type { Context } from 'cordis'
import type { ModelRetryInfo } from '@goalkeeper/model'
import { dispatchIsolated } from '@goalkeeper/kit'
import { Config, resolveSettings } from './config.ts'

export { BASE_URL_VARIABLE, Config, ConfigError, DEFAULT_BASE_URL, DEFAULT_MODEL, describeSettings, KEY_VARIABLE, MODEL_PRESETS, presetOf, resolveSettings } from './config.ts'
export type { ModelPreset, ProviderSettings, Resolution } from './config.ts'
export { buildRequestBody, placeBreakpoints, toWireMessages } from './request-body.ts'
export type { RequestBody, WireBlock, WireMessage } from './request-body.ts'

export const name = 'model-anthropic'
export const inject = ['models']

export const apply = async (ctx: Context, config: Config) => {
  const logger = ctx.logger('model-anthropic')
  // Read at load time, so a key exported before start switches the default composition on.
  const resolution = resolveSettings(config, process.env)
  if (resolution.kind === 'off') {
    logger.info('provider %s is off: %s', resolution.name, resolution.reason)
    ctx.models.standby(resolution.name, { reason: resolution.reason, enableWith: [config.apiKeyEnv] })
    return
  }
  const { settings } = resolution
  // The SDK is loaded only for a provider that is on: a composition that lists this entry without a key
  // (the default cordis.yml) does not pay for it at start-up.
  const { createAnthropicProvider } = await import('./provider.ts')
  const onRetry = (retry: ModelRetryInfo) => dispatchIsolated(ctx, 'model/retry', settings.name, retry)
  ctx.models.register(settings.name, createAnthropicProvider(settings, logger, { onRetry }))
  logger.debug('provider %s registered (model %s at %s)', settings.name, settings.model, settings.host)
}
