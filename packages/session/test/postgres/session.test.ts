// The contract tests of session.test.ts, on the PostgreSQL store.
import './use-postgres.ts'
import '../session.test.ts'
