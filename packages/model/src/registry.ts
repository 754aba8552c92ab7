import { Context, Service } from 'cordis'
import type { ModelProvider, ModelService, ProviderDescription, ProviderStandby } from './types.ts'

/**
 * The `ctx.models` service. It is a Cordis `Service` so that, when another plugin calls
 * `ctx.models.register(...)`, `this.ctx` is that caller's context: the registration becomes an
 * effect of the caller's fiber and disappears when the caller is unloaded.
 * State lives in plain fields (not `#private`) because methods run with a proxied `this`.
 */
export class ModelRegistry extends Service implements ModelService {
  providers = new Map<string, ModelProvider>()
  offList: ProviderStandby[] = []

  constructor(ctx: Context) {
    super(ctx, 'models')
  }

  register(name: string, provider: ModelProvider): () => void {
    if (typeof name !== 'string' || !name.trim()) {
      throw new TypeError(`model provider name must be a non-empty string, got ${JSON.stringify(name)}`)
    }
    if (!provider || typeof provider.stream !== 'function') {
      throw new TypeError(`model provider "${name}" must have a stream(request, signal) method`)
    }
    this.assertFree(name)
    const dispose = this.ctx.effect(() => {
      this.assertFree(name)
      this.providers.set(name, provider)
      return () => {
        if (this.providers.get(name) === provider) this.providers.delete(name)
      }
    }, `models.register(${JSON.stringify(name)})`)
    return () => void dispose()
  }

  get(name: string): ModelProvider | undefined {
    return this.providers.get(name)
  }

  list(): string[] {
    return [...this.providers.keys()]
  }

  pick(preferences: readonly string[]): string | undefined {
    return preferences.find((name) => this.providers.has(name))
  }

  describe(name: string): ProviderDescription | undefined {
    const provider = this.providers.get(name)
    if (!provider) return undefined
    return provider.describe?.() ?? { summary: name, offline: false }
  }

  standby(name: string, standby: Omit<ProviderStandby, 'name'>): () => void {
    const entry: ProviderStandby = { name, reason: standby.reason, enableWith: [...standby.enableWith] }
    const dispose = this.ctx.effect(() => {
      this.offList.push(entry)
      return () => {
        this.offList = this.offList.filter((item) => item !== entry)
      }
    }, `models.standby(${JSON.stringify(name)})`)
    return () => void dispose()
  }

  standbys(): ProviderStandby[] {
    return this.offList.map((entry) => ({ ...entry, enableWith: [...entry.enableWith] }))
  }

  assertFree(name: string) {
    if (this.providers.has(name)) {
      throw new Error(`model provider "${name}" is already registered; unload the plugin that registered it or pick another name`)
    }
  }
}
