// Package scaletest is test support: it checks that a reader's work grows
// in proportion to its input (Linear), and runs the benchmarks that show
// it at 1×, 10×, 100× and 1,000× of a normal input (Bench). Only tests
// import it.
package scaletest
