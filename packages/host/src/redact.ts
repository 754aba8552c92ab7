import type { Env } from '@goalkeeper/loader'

const SECRET_NAME = /_(KEY|TOKEN|SECRET)$/i
/** Shorter values are too likely to occur by chance (`1`, `true`) to be masked everywhere. */
const MIN_SECRET_LENGTH = 6

/** Masks the value of every environment variable named `*_KEY`, `*_TOKEN` or `*_SECRET` found in `text`. */
export function redact(text: string, env: Env = process.env): string {
  const secrets: [name: string, value: string][] = []
  for (const [name, value] of Object.entries(env)) {
    if (!value || value.length < MIN_SECRET_LENGTH || !SECRET_NAME.test(name)) continue
    secrets.push([name, value])
    // The same secret inside JSON output is escaped.
    const escaped = JSON.stringify(value).slice(1, -1)
    if (escaped !== value) secrets.push([name, escaped])
  }
  // Longest first, so a secret that contains another is masked whole.
  secrets.sort((a, b) => b[1].length - a[1].length)
  for (const [name, value] of secrets) {
    if (text.includes(value)) text = text.split(value).join(`[redacted ${name}]`)
  }
  return text
}
