export { createHarness, harnessWith, type CapturedEvent, type Harness, type HarnessOptions, type LogLine } from './harness.ts'
export { call, done, readA, repeat, tools } from './script.ts'
export { outcomes, pluginMessages, userTexts } from './records.ts'
export { deferred, prompt } from './waits.ts'
export { expectUnloadClearsTimer, watchTimers } from './timers.ts'
export { createTestDatabase, serverUrl, testDatabase, withDatabase, type OwnedDatabase, type TestDatabase } from './database.ts'
export { startEmbeddedPostgres } from './database-setup.ts'
// For benchmarks and tests outside the packages that depend on pg.
export { default as pg } from 'pg'
