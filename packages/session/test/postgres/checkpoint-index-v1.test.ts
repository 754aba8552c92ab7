// The checkpoint index contract tests on the PostgreSQL store, on logs of version 1 (a mac on every line).
import './use-postgres.ts'
import '../v1/use-v1.ts'
import '../checkpoint-index.test.ts'
