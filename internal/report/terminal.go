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

// Out is where a report in format goes. Text, Markdown and CSV pass
// through a filter that prints control characters as '?' (a label or
// path in a result file can hold terminal control sequences); text is
// then coloured when color is set (the caller knows whether w is a
// terminal that wants colour). JSON escapes control characters itself,
// and HTML its markup.
func Out(w io.Writer, format string, color bool) io.Writer {
	switch format {
	case "text", "":
		if color {
			w = colorWriter{w}
		}
		return plainText{w}
	case "json", "ndjson", "html":
		return w
	}
	return plainText{w}
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
