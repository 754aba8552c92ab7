/**
 * How many rounds a race or stress test runs: `normal` by default, `stress` with `GOALKEEPER_STRESS=1`.
 * A race that goes wrong one time in a few shows up in the default count; the stress count is for hunting a
 * rarer one, or for checking a change to locking, on a machine that has the time.
 */
export function stressRounds(normal: number, stress: number): number {
  return process.env.GOALKEEPER_STRESS === '1' ? stress : normal
}
