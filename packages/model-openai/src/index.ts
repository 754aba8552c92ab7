import type { Context } from 'cordis'
import type { ModelRetryInfo, ModelStreamNotice } from '@goalkeeper/model'
import { dispatchIsolated } from '@goalkeeper/kit'
import { Config, enableWith, resolveSettings } from './config.ts'
import { createOpenAIProvider } from './provider.ts'

export { Config, ConfigError, describeSettings, enableWith, PRESET_KEY_VARIABLES, PRESETS, resolveSettings } from './config.ts'
export type { PresetName, Preset, ProviderSettings, Resolution } from './config.ts'
export { createOpenAIProvider } from './provider.ts'
export type { ProviderLogger, ProviderOptions } from './provider.ts'
// The retry arithmetic other HTTP providers share (model-anthropic).
export { backoffDelay } from './backoff.ts'
export { MAX_RETRY_AFTER_MS, parseRetryAfter } from './errors.ts'

export const name = 'model-openai'
export const inject = ['models']

export const apply = (ctx: Context, config: Config) => {
  const logger = ctx.logger('model-openai')
  // Read at load time so that a key exported before start switches the default composition on.
  const resolution = resolveSettings(config, process.env)
  if (resolution.kind === 'off') {
    logger.info('provider %s is off: %s', resolution.name, resolution.reason)
    // Said to ctx.models too, so that a front end can tell which variable switches a real model on.
    ctx.models.standby(resolution.name, { reason: resolution.reason, enableWith: enableWith(config) })
    return
  }
  const { settings } = resolution
  const onRetry = (retry: ModelRetryInfo) => dispatchIsolated(ctx, 'model/retry', settings.name, retry)
  const onStream = (notice: ModelStreamNotice) => {
    logger.info('%s: %s', settings.name, notice.kind === 'broken' ? `the stream broke after ${notice.frames} frames: ${notice.error.message}` : `no data for ${notice.silentMs} ms (gives up at ${notice.limitMs} ms)`)
    dispatchIsolated(ctx, 'model/stream', settings.name, notice)
  }
  ctx.models.register(settings.name, createOpenAIProvider(settings, logger, { onRetry, onStream }))
  logger.debug('provider %s registered (model %s at %s)', settings.name, settings.model, settings.host)
}
