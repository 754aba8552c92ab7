export { createHarness, harnessWith, type CapturedEvent, type Harness, type HarnessOptions, type LogLine } from './harness.ts'
export { call, done, readA, repeat, tools } from './script.ts'
export { outcomes, pluginMessages, userTexts } from './records.ts'
export { deferred, hangingCall, prompt, until } from './waits.ts'
export { untilGoal, untilGoalStops } from './goals.ts'
export { startChatServer, type ChatAnswer, type ChatRequest, type ChatServer } from './chat-server.ts'
export { OVERFLOW_BODIES, type OverflowBody } from './overflow-bodies.ts'
export { delta, frame, jsonError, sse, startServer, startSse, textReply, usageFrame, useOpenAIServers, type Handler, type OpenAIServer, type Received } from './openai-server.ts'
export { expectUnloadClearsTimer, watchTimers } from './timers.ts'
export { collectChunks, modelRequest } from './model-stream.ts'
export { counted, cut, error, eventsOf, startReplayServer, stream, thinkingBlocksOf, type ReplayServer, type Reply } from './anthropic-server.ts'
export { captureContext, useFixtures, writeYml, type Probe } from './loader-fixtures.ts'
export {
  CHILD_WAIT_LIMIT, CLI_TIMEOUT, childEnv, compositionYml, fileMatches, hint, jsonLines, localModelProject, readSession, repoRoot, run, sessionIdOf, snapshot, start, useProject,
  type Project, type ProjectOptions, type Run,
} from './cli.ts'
export { JSON_OUTPUT_SCHEMA, jsonOutputProblem } from './json-output.ts'
export { logFiles, sessionStack, type SessionStackConfig } from './sessions.ts'
export { createTestDatabase, serverUrl, testDatabase, withDatabase, type OwnedDatabase, type TestDatabase } from './database.ts'
export { type EmbeddedServer, startEmbeddedPostgres } from './database-setup.ts'
export { nodeArgs } from './child-builds.ts'
export { stressRounds } from './stress.ts'
// For benchmarks and tests outside the packages that depend on pg.
export { default as pg } from 'pg'
