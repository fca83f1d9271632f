// Package bench defines the tests iolens runs (specs and built-in suites),
// the result record every other package reads back, and the runner that
// prepares a target, runs fio with device sampling, and cleans up.
package bench
