// Package userfile opens the files a user names on the command line. An
// input is a regular file, opened without blocking (a FIFO or a device is
// refused, never waited on) and read within a bound; standard input is
// read within a bound too, and gives up on Ctrl-C or when nothing comes.
// An output never clobbers: it is a regular file or a new path, never what
// the command reads, the history database or another output, and it is
// replaced through a synced temporary file, every write checked.
package userfile
