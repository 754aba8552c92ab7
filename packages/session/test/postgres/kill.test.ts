// The contract tests of kill.test.ts, on the PostgreSQL store.
import './use-postgres.ts'
import '../kill.test.ts'
