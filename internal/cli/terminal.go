package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/iolens/iolens/internal/progress"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/termtext"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// screen is a standard stream as the commands see it: everything written
// to it passes the one terminal filter (termtext), so that a run id, a
// label, an HTTP status line or a pod's message never drives the
// terminal. Data formats (JSON, NDJSON, a command's own output in emulate
// exec, the agent's frames) and iolens's own drawing codes go to raw.
// The first write error is kept, so that a report cut short (a full disk,
// /dev/full) is a failure.
type screen struct {
	raw   io.Writer
	clean *termtext.Writer
	err   error
}

func newScreen(w io.Writer) *screen {
	if s, ok := w.(*screen); ok {
		return s
	}
	return &screen{raw: w, clean: termtext.NewWriter(w)}
}

func (s *screen) Write(p []byte) (int, error) {
	n, err := s.clean.Write(p)
	if err != nil && s.err == nil {
		s.err = err
	}
	return n, err
}

// rawOf is the stream under the filter, for data formats and drawing.
func rawOf(w io.Writer) io.Writer {
	if s, ok := w.(*screen); ok {
		return &rawWriter{s}
	}
	return w
}

// rawWriter writes past the filter, keeping the first error as the
// screen does.
type rawWriter struct{ s *screen }

func (r *rawWriter) Write(p []byte) (int, error) {
	n, err := r.s.raw.Write(p)
	if err != nil && r.s.err == nil {
		r.s.err = err
	}
	return n, err
}

// rawFile is the *os.File under w, if w is one (a terminal to draw on,
// a command's own standard stream).
func rawFile(w io.Writer) (*os.File, bool) {
	if s, ok := w.(*screen); ok {
		w = s.raw
	}
	if p, ok := w.(*pipeWatch); ok {
		return p.f, true
	}
	f, ok := w.(*os.File)
	return f, ok
}

// filterStreams puts the terminal filter on a command tree's output
// streams. The returned hook (the root's PersistentPostRunE) makes a
// write that failed on standard output the command's failure.
func filterStreams(streams *IOStreams) func(*cobra.Command, []string) error {
	out := newScreen(streams.Out)
	streams.Out, streams.ErrOut = out, newScreen(streams.ErrOut)
	return func(*cobra.Command, []string) error {
		if out.err != nil {
			return &writeError{err: out.err}
		}
		return nil
	}
}

// writeError is standard output that could not take the output.
type writeError struct{ err error }

func (e *writeError) Error() string { return fmt.Sprintf("writing standard output: %v", e.err) }
func (e *writeError) Unwrap() error { return e.err }

// Hint says what to do.
func (e *writeError) Hint() string {
	if errors.Is(e.err, os.ErrClosed) {
		return "standard output was closed"
	}
	return "the output is incomplete: check where standard output goes (a full disk?)"
}

// terminal reports whether w is a terminal, and its width (0 unknown).
func terminal(w io.Writer) (bool, int) {
	f, ok := rawFile(w)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false, 0
	}
	wd, _, _ := term.GetSize(int(f.Fd()))
	return true, wd
}

// reportOut is where a report in format f goes on w (a command's
// standard output): past the screen's filter, through f's own escaping
// (report.Format.To), coloured on a terminal unless NO_COLOR
// (https://no-color.org) or TERM=dumb says otherwise.
func reportOut(w io.Writer, f report.Format) io.Writer {
	tty, _ := terminal(w)
	return f.To(rawOf(w), tty && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb")
}

// writeReport writes in as f on w, through f's own escaping.
func writeReport(w io.Writer, f report.Format, in report.Input) error {
	return f.Write(reportOut(w, f), in)
}

// newProgress draws a run's progress on w (stderr). progress.Run filters what
// it prints itself, around the codes that redraw its live line.
func newProgress(w io.Writer, quiet bool) *progress.Run {
	tty, width := terminal(w)
	return &progress.Run{W: rawOf(w), TTY: tty, Width: width, Quiet: quiet, Summary: report.ResultSummary}
}

// passThrough is the *os.File under w when there is one, for a command
// iolens runs for the user (its output is its own, and a terminal must
// stay a terminal), else w past the filter.
func passThrough(w io.Writer) io.Writer {
	if f, ok := rawFile(w); ok {
		return f
	}
	return rawOf(w)
}
