// Package limits carries the published performance limits of cloud disks
// and VM sizes (an embedded, sourced and dated catalog) and does the
// arithmetic that turns them into expected ceilings: per-size formulas,
// VM caps by cache mode, IO-size counting, burst allowances, and IBM's
// split of VSI bandwidth across attached volumes. Diagnose compares a
// measured result with those ceilings and says which limit binds.
//
// Callers elsewhere use three entry points: ParseExpectation (or
// ParseDisk) to read a disk spec such as "azure:P15" or
// "aws:gp3:iops=6000,throughput=250" and get Ceilings and Burst figures;
// FromStorageClass to map a Kubernetes StorageClass and a claim size to
// such a spec; and Diagnose to add "ceiling" findings to a result.
package limits
