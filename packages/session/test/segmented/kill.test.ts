// The kill suite on logs kept in segments of 4 KiB.
import './use-segments.ts'
import '../kill.test.ts'
