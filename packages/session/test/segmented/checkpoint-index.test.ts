// The checkpoint-index suite on logs kept in segments of 4 KiB.
import './use-segments.ts'
import '../checkpoint-index.test.ts'
