// Builds the greeting text, trimming the name and falling back to "world".
export function formatGreeting(name) {
  const clean = String(name).trim() || 'world'
  return `Hello, ${clean}!`
}
