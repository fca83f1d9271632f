package report

import (
	"bytes"
	"io"

	"github.com/iolens/iolens/internal/termtext"
)

// ANSI colours for what a reader must not miss: failures red, warnings
// yellow, passes green.
var severityColors = []struct{ token, color string }{
	{"[fail]", "\x1b[1;31m"}, {"FAIL", "\x1b[1;31m"},
	{"[warn]", "\x1b[33m"},
	{"PASS", "\x1b[32m"},
}

// Out is where a report in format goes. Text, Markdown and CSV pass
// the terminal filter (termtext: a label or path in a result file can
// hold terminal control sequences); text is then coloured when color is
// set (the caller knows whether w is a terminal that wants colour). JSON
// gets the few a JSON encoder leaves raw escaped (termtext.JSONWriter: the
// same JSON to any reader); HTML escapes its markup.
func Out(w io.Writer, format string, color bool) io.Writer {
	switch format {
	case "text", "":
		if color {
			w = colorWriter{w}
		}
		return termtext.NewWriter(w)
	case "json", "ndjson":
		return termtext.NewJSONWriter(w)
	case "html":
		return termtext.NewHTMLWriter(w)
	}
	return termtext.NewWriter(w)
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
