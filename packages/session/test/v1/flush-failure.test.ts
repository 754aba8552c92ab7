// The flush-failure suite on logs of version 1 (a mac on every line).
import './use-v1.ts'
import '../flush-failure.test.ts'
