// Package coldread samples blocks of existing files with direct reads and
// never writes: each sampled block read once (its first touch) and again
// (its second touch), one at a time and many at once. A volume restored
// from a snapshot fetches each block on its first read, so its first
// touches are far slower than its second: Sample says how many blocks are
// cold, what a first read costs, how long reading the whole data would
// take at the measured rate, and the command that does it. Files are
// opened read-only (and without updating their access time where the
// kernel allows), and the bytes read are bounded by the caller.
package coldread
