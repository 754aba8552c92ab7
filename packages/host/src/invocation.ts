/**
 * How to run goalkeeper again from the shell it was started in, for hints. Started by npm inside the
 * goalkeeper repository (`npm start`, `npm run goalkeeper`, `npx goalkeeper`), the `goalkeeper` command is
 * usually not on PATH, and `npm run` would print its banner on stdout; `npx goalkeeper` runs the
 * repository's bin without either problem.
 */
export function programName(env: NodeJS.ProcessEnv = process.env): string {
  return env.npm_package_name === 'goalkeeper' ? 'npx goalkeeper' : 'goalkeeper'
}
