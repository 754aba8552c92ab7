// The contract tests of checkpoint-index.test.ts, on the PostgreSQL store.
import './use-postgres.ts'
import '../checkpoint-index.test.ts'
