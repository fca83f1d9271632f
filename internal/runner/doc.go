// Package runner runs tests against a target: it resolves suites and job
// files into test specs, prepares the target (a scratch directory or a
// block device, with a preconditioned file), runs fio with device
// sampling, and hands each finished result.Result to the caller before it
// cleans up.
package runner
