// Package compare sets results side by side: per test and direction, IOPS,
// throughput and latency percentiles of each operand (a run, a file, a
// label selection), the difference to the first, and whether it is
// significant (Welch's t-test over repeats). Percentiles come from merged
// histograms, never from averaged percentiles.
package compare
