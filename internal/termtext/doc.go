// Package termtext keeps text that others wrote (run ids and labels from
// result files, HTTP status lines, fio's messages, pod logs, file names)
// from driving the terminal it is printed on. Every character a terminal
// would obey rather than show is printed as '?': C0 controls but tab and
// newline, DEL, the C1 controls, bytes that are not UTF-8, and the
// bidirectional overrides that reorder what is shown.
package termtext
