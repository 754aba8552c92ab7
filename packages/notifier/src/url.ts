/**
 * The URL as the delivery log shows it: scheme, host and path. A query string and user info are where
 * webhook URLs carry tokens (`?token=`, `https://key@host`), so they never reach a session file.
 */
export function loggedUrl(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`
  } catch {
    return '(not a URL)'
  }
}

/** Why `url` cannot receive webhooks, or undefined when it can (http or https, absolute). */
export function urlProblem(url: string): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return `${JSON.stringify(url)} is not an absolute URL`
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `${loggedUrl(url)}: only http and https URLs receive webhooks`
  return undefined
}
