/**
 * The one HTML document of the board; the script and the style come from the same origin, so the
 * Content-Security-Policy can forbid every inline script and style.
 */
export const SHELL_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>goalkeeper board</title>
<link rel="stylesheet" href="/board.css">
<script src="/board.js" defer></script>
</head>
<body>
<header><a href="/" id="home">goalkeeper board</a><span id="live" class="live">connecting…</span></header>
<main id="main"></main>
</body>
</html>
`

/** What the page may load and do: its own script, style and API, nothing inline, nothing framed, no form posts. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')
