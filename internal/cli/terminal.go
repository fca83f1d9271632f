package cli

import (
	"io"
	"os"

	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/runner"
	"golang.org/x/term"
)

// terminal reports whether w is a terminal, and its width (0 unknown).
func terminal(w io.Writer) (bool, int) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false, 0
	}
	wd, _, _ := term.GetSize(int(f.Fd()))
	return true, wd
}

// reportOut is where a report in format goes: coloured on a terminal,
// unless NO_COLOR (https://no-color.org) or TERM=dumb says otherwise.
func reportOut(w io.Writer, format string) io.Writer {
	tty, _ := terminal(w)
	return report.Out(w, format, tty && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb")
}

// newProgress draws a run's progress on w (stderr).
func newProgress(w io.Writer, quiet bool) *runner.Progress {
	tty, width := terminal(w)
	return &runner.Progress{W: w, TTY: tty, Width: width, Quiet: quiet, Summary: report.ResultSummary}
}
