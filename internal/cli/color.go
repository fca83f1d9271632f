package cli

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"
)

// ANSI colours for what a reader must not miss: failures red, warnings
// yellow, passes green.
var severityColors = []struct{ token, color string }{
	{"[fail]", "\x1b[1;31m"}, {"FAIL", "\x1b[1;31m"},
	{"[warn]", "\x1b[33m"},
	{"PASS", "\x1b[32m"},
}

// colorOut returns w itself, or, when w is a terminal and neither NO_COLOR
// (https://no-color.org) nor TERM=dumb says otherwise, a writer that
// colours severities in text reports.
func colorOut(w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return w
	}
	return colorWriter{w}
}

// colorWriter colours severity tokens in what passes through it. Reports
// write whole lines, so a token is never split between two writes.
type colorWriter struct{ w io.Writer }

func (c colorWriter) Write(p []byte) (int, error) {
	out := p
	for _, s := range severityColors {
		if bytes.Contains(out, []byte(s.token)) {
			out = bytes.ReplaceAll(out, []byte(s.token), []byte(s.color+s.token+"\x1b[0m"))
		}
	}
	if _, err := c.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// reportOut is where a report in format goes: coloured on a terminal for
// text, as it is for every other format (JSON, CSV... must stay clean).
func reportOut(w io.Writer, format string) io.Writer {
	if format == "text" || format == "" {
		return colorOut(w)
	}
	return w
}
