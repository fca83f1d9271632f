// Package runner runs tests against a target: it resolves suites and job
// files into test specs, checking every fio option against an allowlist
// (CheckSpec), prepares the target (a scratch directory with a
// preconditioned file, or a block device checked for mounts, holders and
// swap and held with O_EXCL), runs fio with device sampling, and hands
// each finished result.Result to the caller before it cleans up.
package runner
