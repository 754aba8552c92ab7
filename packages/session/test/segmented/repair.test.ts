// The repair suite on logs kept in segments of 4 KiB.
import './use-segments.ts'
import '../repair.test.ts'
