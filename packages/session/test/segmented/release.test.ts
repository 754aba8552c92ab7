// The release suite on logs kept in segments of 4 KiB.
import './use-segments.ts'
import '../release.test.ts'
