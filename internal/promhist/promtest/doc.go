// Package promtest starts Debian's Prometheus and node exporter for
// tests, on loopback ports, with a 1 s scrape interval, and stops and
// removes them when the test ends.
package promtest
