import { createMasker, redactedLabel } from '@goalkeeper/kit'
import type { Env } from '@goalkeeper/loader'

/**
 * `text` with the secrets of `env` masked as `[redacted NAME]` and secret-shaped text as `***`, by the
 * project's one rule (`createMasker` in @goalkeeper/kit). Read per call: the environment may change.
 */
export function redact(text: string, env: Env = process.env): string {
  return createMasker({ env, label: redactedLabel }).mask(text)
}
