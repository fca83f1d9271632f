package report

import (
	"bytes"
	"io"
)

// ANSI colours for what a reader must not miss: failures red, warnings
// yellow, passes green.
var severityColors = []struct{ token, color string }{
	{"[fail]", "\x1b[1;31m"}, {"FAIL", "\x1b[1;31m"},
	{"[warn]", "\x1b[33m"},
	{"PASS", "\x1b[32m"},
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
