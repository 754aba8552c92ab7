// Imported first by every file of this folder: the suite file it imports next runs on JSONL logs split into
// segments of 1 KiB, so that they roll over at nearly every checkpoint (helpers.ts reads this when loaded).
;(globalThis as { GOALKEEPER_TEST_SEGMENT_BYTES?: number }).GOALKEEPER_TEST_SEGMENT_BYTES = 1024
