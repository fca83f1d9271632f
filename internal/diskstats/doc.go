// Package diskstats finds the block devices behind a path and samples them
// once a second from /proc/diskstats, with host iowait and dirty memory,
// turning the kernel's counters into iostat-style rates. The proc and sys
// roots are values so tests can point them at fixture trees.
package diskstats
