// Package compare sets results side by side: per test and direction, IOPS,
// throughput and latency percentiles of each operand (a run, a file, a
// label selection), the difference to the first, and whether it is better
// or worse (Welch's t-test over repeats). It warns when the operands ran a
// test with different parameters, and prices measured rates when the
// disk is known. Percentiles come from merged histograms, never from
// averaged percentiles. It computes; report renders the comparison in
// each of its formats (report.Comparisons).
package compare
