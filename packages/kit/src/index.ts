export { dispatchIsolated } from './isolated.ts'
export { describeError } from './errors.ts'
export { cloneData, deepFreeze, isRecord, untraced } from './record.ts'
export { delay, nextMacrotask, type DelayOptions } from './delay.ts'
export { clip, tail } from './text.ts'
export { parseDuration } from './duration.ts'
export {
  createMasker, formsOf, holdSecret, isSecretVariable, liveMasker, maskDeep, MIN_SECRET_CHARS, redactedLabel, SECRET_NAME, secretsIn,
  type Env, type Masker, type MaskerOptions, type Secret,
} from './secrets.ts'
export { userConfigDir } from './user-dir.ts'
export { isAlive } from './process.ts'
