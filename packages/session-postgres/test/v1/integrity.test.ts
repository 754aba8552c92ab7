// The tamper evidence tests in the database on logs of version 1 (a mac on every line).
import './use-v1.ts'
import '../integrity.test.ts'
