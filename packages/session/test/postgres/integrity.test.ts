// The contract tests of integrity.test.ts, on the PostgreSQL store (rows edited in the database: session-postgres/test/integrity.test.ts).
import './use-postgres.ts'
import '../integrity.test.ts'
