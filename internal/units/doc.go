// Package units parses and prints the values people type and read: byte
// sizes, durations, rates and counts. Every parser refuses NaN, infinities,
// negatives and overflow, and says what range it accepts.
package units
