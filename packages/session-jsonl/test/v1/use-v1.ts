// Imported first by every file of this folder: the suite file it imports next runs on logs of version 1
// (a mac on every line), the format of sessions created before version 2 (helpers.ts reads this when loaded).
;(globalThis as { GOALKEEPER_TEST_LOG_VERSION?: number }).GOALKEEPER_TEST_LOG_VERSION = 1
