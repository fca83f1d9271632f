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

// reportOut is where a report in format goes. Text, Markdown and CSV pass
// through plainText (a label or path in a result file can hold terminal
// control sequences), then, on a terminal, the colours for text. JSON
// escapes control characters itself, and HTML its markup.
func reportOut(w io.Writer, format string) io.Writer {
	switch format {
	case "text", "":
		return plainText{colorOut(w)}
	case "json", "ndjson", "html":
		return w
	}
	return plainText{w}
}

// plainText replaces the control characters a terminal would obey (C0
// but tab and newline, DEL, and UTF-8's C1 controls) with '?'.
type plainText struct{ w io.Writer }

func (t plainText) Write(p []byte) (int, error) {
	out := p
	for i := 0; i < len(p); i++ {
		c := p[i]
		ctl := c < 0x20 && c != '\n' && c != '\t' || c == 0x7f
		c1 := c == 0xc2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9f
		if !ctl && !c1 {
			continue
		}
		if &out[0] == &p[0] {
			out = append([]byte(nil), p...)
		}
		out[i] = '?'
		if c1 {
			out[i+1] = '?'
			i++
		}
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
