// The contract tests of read.test.ts, on the PostgreSQL store.
import './use-postgres.ts'
import '../read.test.ts'
