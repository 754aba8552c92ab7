// Imported first by every file of this folder: the contract suite file it imports next runs on the
// PostgreSQL store (helpers.ts reads this when it is loaded).
;(globalThis as { GOALKEEPER_TEST_STORE?: string }).GOALKEEPER_TEST_STORE = 'postgres'
