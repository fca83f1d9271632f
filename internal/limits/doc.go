// Package limits carries the published performance limits of cloud disks,
// file shares and VM sizes (an embedded, sourced and dated catalog), their
// list prices where a source states them, and the arithmetic that turns
// them into expected ceilings: per-size formulas, VM caps by cache mode,
// IO-size counting, burst allowances, IBM's split of VSI bandwidth across
// attached volumes, and the VM's network for shares. Diagnose compares a
// measured result with those ceilings and says which limit binds.
//
// Callers elsewhere use ParseExpectation (or ParseDisk) to read a spec
// such as "azure:P15" or "aws:gp3:iops=6000,throughput=250" and get
// Ceilings and Burst figures; FromStorageClass to map a Kubernetes
// StorageClass and a claim size to such a spec; Diagnose to add "ceiling"
// findings to a result; DiskCost and VMPrice for prices; and NewReport,
// WriteSizingText and Entry to render what `iolens limits` and `iolens
// catalog` print.
package limits
