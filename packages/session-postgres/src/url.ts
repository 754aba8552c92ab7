/** The URL with its password replaced, for messages and `location`. */
export function maskUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    // Not a URL at all: keep the scheme, hide the rest (it may hold a password in some other form).
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0]
    return scheme ? `${scheme}…` : '(not a URL)'
  }
}

/** Checks the shape before connecting, so a typo gets a message about the URL, not a socket error. */
export function checkUrl(url: string): void {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw Object.assign(new Error(`database ${maskUrl(url)} is not a URL: write postgres://user:password@host:5432/database`), { code: 'SESSION_DATABASE' })
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw Object.assign(new Error(`database ${maskUrl(url)} is not a PostgreSQL URL (it starts with ${parsed.protocol}//, not postgres://)`), { code: 'SESSION_DATABASE' })
  }
}
