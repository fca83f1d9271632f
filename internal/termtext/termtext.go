package termtext

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Clean returns s with every character a terminal would obey replaced by
// '?'.
func Clean(s string) string {
	if IsClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if obeyed(r, n) {
			b.WriteByte('?')
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// IsClean reports whether s prints as it is.
func IsClean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if obeyed(r, n) {
			return false
		}
		i += n
	}
	return true
}

// obeyed reports whether a terminal acts on rune r (n bytes long) instead
// of showing it.
func obeyed(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n <= 1:
		return true // not UTF-8: a lone 0x9b is CSI to an 8-bit terminal
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // bidi embeddings, overrides and isolates
	}
	return false
}

// Writer passes what is written through Clean on its way to W. A
// character split between two writes is held until the next one.
type Writer struct {
	W       io.Writer
	pending []byte
}

// NewWriter filters what is written to w.
func NewWriter(w io.Writer) *Writer { return &Writer{W: w} }

// Write cleans p and writes it; it reports len(p) when W took it all.
func (t *Writer) Write(p []byte) (int, error) {
	buf := p
	if len(t.pending) > 0 {
		buf = append(t.pending, p...)
		t.pending = nil
	}
	// Hold back an incomplete UTF-8 sequence at the end.
	if cut := incompleteTail(buf); cut < len(buf) {
		t.pending = append([]byte(nil), buf[cut:]...)
		buf = buf[:cut]
	}
	s := string(buf)
	if !IsClean(s) {
		s = Clean(s)
	}
	if _, err := io.WriteString(t.W, s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// incompleteTail is where a trailing, possibly incomplete UTF-8 sequence
// starts in b, or len(b) when b ends on a whole character.
func incompleteTail(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-3; i-- {
		c := b[i]
		if c < 0x80 {
			return len(b)
		}
		if c >= 0xc0 { // a leading byte
			if !utf8.FullRune(b[i:]) {
				return i
			}
			return len(b)
		}
	}
	return len(b)
}

// JSONWriter passes JSON through to W with the characters a terminal
// would obey that JSON leaves raw (DEL, the C1 controls, the bidi
// overrides; encoders already escape C0) written as \uXXXX escapes: the
// same JSON to any reader, and nothing a terminal acts on. Outside
// strings JSON holds none of them, so every one is inside a string.
type JSONWriter struct {
	W       io.Writer
	pending []byte
	markup  bool // HTML: C0 controls and stray bytes escaped too
}

// NewJSONWriter escapes what is written to w.
func NewJSONWriter(w io.Writer) *JSONWriter { return &JSONWriter{W: w} }

// NewHTMLWriter escapes what is written to w, an HTML page: every
// character a terminal would obey (C0 and C1 controls, DEL, the bidi
// overrides, bytes that are not UTF-8) is written as the six characters
// \uXXXX. Data inside the page's JSON reads back the same; in its text
// the escape shows instead of acting, so a page sent to a terminal or
// printed with cat cannot drive it.
func NewHTMLWriter(w io.Writer) *JSONWriter { return &JSONWriter{W: w, markup: true} }

// Write escapes p and writes it; it reports len(p) when W took it all.
func (j *JSONWriter) Write(p []byte) (int, error) {
	buf := p
	if len(j.pending) > 0 {
		buf = append(j.pending, p...)
		j.pending = nil
	}
	if cut := incompleteTail(buf); cut < len(buf) {
		j.pending = append([]byte(nil), buf[cut:]...)
		buf = buf[:cut]
	}
	out := buf
	if !IsClean(string(buf)) {
		var b strings.Builder
		for i := 0; i < len(buf); {
			r, n := utf8.DecodeRune(buf[i:])
			switch {
			case j.markup && r == utf8.RuneError && n <= 1:
				b.WriteString("\\ufffd")
			case r != '\n' && r != '\t' && obeyed(r, n) && !(r == utf8.RuneError && n <= 1) && (r >= 0x20 || j.markup):
				fmt.Fprintf(&b, "\\u%04x", r)
			default:
				b.Write(buf[i : i+n])
			}
			i += n
		}
		out = []byte(b.String())
	}
	if _, err := j.W.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Line returns s as one line of text: every line break (LF, CR, VT, FF,
// NEL, the Unicode line and paragraph separators) and tab becomes a
// space, and every other character a terminal would obey '?'. What
// others wrote (a label, a run id, a finding read back) then cannot start
// a report line of its own.
func Line(s string) string {
	if IsLine(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case breaks(r):
			b.WriteByte(' ')
		case obeyed(r, n):
			b.WriteByte('?')
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// IsLine reports whether s prints as one line, as it is.
func IsLine(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if breaks(r) || obeyed(r, n) {
			return false
		}
		i += n
	}
	return true
}

// breaks reports whether r ends a line, or moves to a column, somewhere.
func breaks(r rune) bool {
	switch r {
	case '\n', '\r', '\t', '\v', '\f', 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// Unbroken returns s with every line break (LF, CR, VT, FF, NEL, the
// Unicode line and paragraph separators) a space, and nothing else
// changed: a name or a label read back keeps its characters (the
// terminal filter and the data formats deal with the rest) but cannot
// start a line of a report.
func Unbroken(s string) string {
	if !HasBreak(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if breaks(r) && r != '\t' {
			b.WriteByte(' ')
		} else {
			b.WriteString(s[i : i+n]) // bytes that are not UTF-8 as they were
		}
		i += n
	}
	return b.String()
}

// HasBreak reports whether s holds a line break.
func HasBreak(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\n' || c == '\r' || c == '\v' || c == '\f':
			return true
		case c >= 0x80:
			return strings.ContainsAny(s[i:], "\n\r\v\f\u0085\u2028\u2029")
		}
	}
	return false
}
