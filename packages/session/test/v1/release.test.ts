// The release, last-turns and head check suite on logs of version 1 (a mac on every line).
import './use-v1.ts'
import '../release.test.ts'
