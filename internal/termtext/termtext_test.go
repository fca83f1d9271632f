package termtext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain run 20240501-120000-ab12cd", "plain run 20240501-120000-ab12cd"},
		{"tab\tand\nnewline", "tab\tand\nnewline"},
		{"é, 日本, µs, ✓, 🙂", "é, 日本, µs, ✓, 🙂"},
		{"\x1b[2J\x1b]0;owned\x07x", "?[2J?]0;owned?x"},
		{"back\bspace\rcr", "back?space?cr"},
		{"del\x7f", "del?"},
		{"c1 csi \u009b31m", "c1 csi ?31m"},
		{"lone \x9b byte", "lone ? byte"},
		{"bad \xff\xfe utf8", "bad ?? utf8"},
		{"bidi \u202eevil\u202c and \u2066iso\u2069", "bidi ?evil? and ?iso?"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Clean(tt.in); got != tt.want {
			t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if IsClean(tt.in) != (tt.in == tt.want) {
			t.Errorf("IsClean(%q) = %v", tt.in, IsClean(tt.in))
		}
	}
}

// A character split across writes reaches the terminal whole; an escape
// split across writes is still caught.
func TestWriterSplits(t *testing.T) {
	in := "µs \u009b2J é \x1b[0m 日本\n"
	for cut := 0; cut <= len(in); cut++ {
		var b bytes.Buffer
		w := NewWriter(&b)
		for _, part := range []string{in[:cut], in[cut:]} {
			if n, err := w.Write([]byte(part)); err != nil || n != len(part) {
				t.Fatalf("Write(%q) = %d, %v", part, n, err)
			}
		}
		if want := Clean(in); b.String() != want {
			t.Errorf("cut at %d: %q, want %q", cut, b.String(), want)
		}
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"ok", "\x1b]8;;http://x\x07link\x1b]8;;\x07", "\u009b", "\xc2", "a\u202eb", "日本\r\n"} {
		f.Add(s, 1)
	}
	f.Fuzz(func(t *testing.T, s string, cut int) {
		c := Clean(s)
		if !IsClean(c) {
			t.Fatalf("Clean(%q) = %q is not clean", s, c)
		}
		if Clean(c) != c {
			t.Fatalf("Clean is not idempotent on %q", s)
		}
		if cut < 0 {
			cut = -cut
		}
		cut %= len(s) + 1
		var b bytes.Buffer
		w := NewWriter(&b)
		w.Write([]byte(s[:cut]))
		w.Write([]byte(s[cut:]))
		w.Write([]byte("\n")) // ends any held sequence
		if got := b.String(); !IsClean(got) {
			t.Fatalf("Writer let %q through", got)
		}
	})
}

// The JSON writer escapes what a terminal would obey and JSON leaves raw,
// and the JSON reads back the same.
func TestJSONWriter(t *testing.T) {
	for _, s := range []string{"plain", "c1 \u009b31m del \x7f bidi \u202e\u2066 é 日本", "\x1b]0;t\x07"} {
		raw, _ := json.Marshal(map[string]string{"run_id": s})
		var b bytes.Buffer
		w := NewJSONWriter(&b)
		for i := 0; i < len(raw); i += 3 { // split characters across writes
			w.Write(raw[i:min(i+3, len(raw))])
		}
		if !IsClean(b.String()) {
			t.Errorf("%q: %q is not clean", s, b.String())
		}
		var back map[string]string
		if err := json.Unmarshal(b.Bytes(), &back); err != nil || back["run_id"] != s {
			t.Errorf("%q: read back %q, %v", s, back["run_id"], err)
		}
	}
}

func FuzzJSONWriter(f *testing.F) {
	f.Add("\u009b\u202e\x7f", 2)
	f.Fuzz(func(t *testing.T, s string, cut int) {
		raw, err := json.Marshal(s)
		if err != nil {
			return
		}
		if cut < 0 {
			cut = -cut
		}
		cut %= len(raw) + 1
		var b bytes.Buffer
		w := NewJSONWriter(&b)
		w.Write(raw[:cut])
		w.Write(raw[cut:])
		var back, want string
		json.Unmarshal(raw, &want)
		if err := json.Unmarshal(b.Bytes(), &back); err != nil || back != want || !IsClean(b.String()) {
			t.Fatalf("%q: %q -> %q (%v)", s, raw, b.String(), err)
		}
	})
}

// The HTML writer escapes C0 controls and stray bytes too, which JSON
// encoders never leave raw but a page's text may carry.
func TestHTMLWriter(t *testing.T) {
	var b strings.Builder
	w := NewHTMLWriter(&b)
	in := "<td>x\x1b[2J\u009b\u202e\xffy\n\t</td>"
	// written in two pieces that split a character
	w.Write([]byte(in[:10]))
	w.Write([]byte(in[10:]))
	want := "<td>x\\u001b[2J\\u009b\\u202e\\ufffdy\n\t</td>"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	if !IsClean(b.String()) {
		t.Errorf("%q is not clean", b.String())
	}
}

// Line and Unbroken keep what others wrote to one line: every line break
// a terminal or an editor knows (issue 34.6).
func TestOneLine(t *testing.T) {
	for _, c := range []struct{ in, line, unbroken string }{
		{"plain text, µs", "plain text, µs", "plain text, µs"},
		{"a\nb", "a b", "a b"},
		{"a\r\nb", "a  b", "a  b"},
		{"a\vb\fc", "a b c", "a b c"},
		{"a\u0085b\u2028c\u2029d", "a b c d", "a b c d"},
		{"a\tb", "a b", "a\tb"},
		{"a\x1b[2Jb", "a?[2Jb", "a\x1b[2Jb"},
		{"µ\nb", "µ b", "µ b"},
		{"\xc2\n", "? ", "\xc2 "},
	} {
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := Unbroken(c.in); got != c.unbroken {
			t.Errorf("Unbroken(%q) = %q, want %q", c.in, got, c.unbroken)
		}
		if IsLine(c.in) != (c.in == c.line) || HasBreak(c.in) != (c.in != c.unbroken) {
			t.Errorf("%q: IsLine %v, HasBreak %v", c.in, IsLine(c.in), HasBreak(c.in))
		}
	}
}

func FuzzLine(f *testing.F) {
	for _, s := range []string{"a\nb", "\u2028", "\xc2", "a\x85b", "\r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l := Line(s)
		if strings.ContainsAny(l, "\n\r\v\f\u0085\u2028\u2029") || !IsLine(l) || !IsClean(l) {
			t.Fatalf("Line(%q) = %q", s, l)
		}
		if u := Unbroken(s); HasBreak(u) || strings.ContainsAny(u, "\n\r\v\f\u0085\u2028\u2029") || len(u) > len(s) {
			t.Fatalf("Unbroken(%q) = %q", s, u)
		}
	})
}
