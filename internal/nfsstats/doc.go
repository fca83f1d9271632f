// Package nfsstats samples an NFS client's own view of a mount from
// /proc/<pid>/mountstats (read through prometheus/procfs): operations per
// second, round-trip and execute time per operation, retransmissions and
// timeouts, and the bytes moved to and from the server. On a network
// share these replace block diskstats, which see no device. SMB mounts
// appear in mountstats without statistics; the package says so rather
// than guess. The proc root is a value, so tests read fixture trees.
package nfsstats
