package report

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// Out is where the results report in format goes on w: through the
// format's own escaping, as the command line writes it.
func Out(w io.Writer, format string, color bool) io.Writer {
	f, err := Results.Lookup(format)
	if err != nil {
		panic(err)
	}
	return f.To(w, color)
}

func TestOutColors(t *testing.T) {
	line := "  [fail] t: etcd FAIL\n  [warn] u: x\n  [info] v: PASS\n"
	var b bytes.Buffer
	n, err := Out(&b, "text", true).Write([]byte(line))
	if err != nil || n != len(line) {
		t.Fatalf("wrote %d, %v", n, err)
	}
	got := b.String()
	for _, want := range []string{"\x1b[1;31m[fail]\x1b[0m", "\x1b[1;31mFAIL\x1b[0m", "\x1b[33m[warn]\x1b[0m", "\x1b[32mPASS\x1b[0m", "[info] v"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in %q", want, got)
		}
	}
	b.Reset()
	_, _ = Out(&b, "text", false).Write([]byte(line))
	if b.String() != line {
		t.Errorf("no colour asked, got %q", b.String())
	}
}

// TestOutPlainText: a label holding terminal control sequences reaches
// text, Markdown and CSV reports as '?', JSON escaped, and the report's
// own layout (newlines, tabs, UTF-8) untouched; the colours' own escapes
// are not filtered away.
func TestOutPlainText(t *testing.T) {
	in := "label \x1b]0;title\a red\x1b[31m del\x7f c1\u009b é\ttab\n"
	for _, f := range []string{"text", "md", "csv"} {
		var b bytes.Buffer
		if _, err := Out(&b, f, false).Write([]byte(in)); err != nil {
			t.Fatal(err)
		}
		if got, want := b.String(), "label ?]0;title? red?[31m del? c1? é\ttab\n"; got != want {
			t.Errorf("%s: %q, want %q", f, got, want)
		}
	}
	var b bytes.Buffer
	_, _ = Out(&b, "text", true).Write([]byte("\x1b[2J[fail]\n"))
	if got, want := b.String(), "?[2J\x1b[1;31m[fail]\x1b[0m\n"; got != want {
		t.Errorf("text with colour: %q, want %q", got, want)
	}
	// JSON reads back the same, with nothing raw a terminal would obey.
	for _, f := range []string{"json", "ndjson"} {
		raw, _ := json.Marshal(in)
		b.Reset()
		_, _ = Out(&b, f, true).Write(raw)
		var back string
		if err := json.Unmarshal(b.Bytes(), &back); err != nil || back != in {
			t.Errorf("%s changed: %q, %v", f, back, err)
		}
		if strings.ContainsAny(b.String(), "\x1b\x7f\u009b") {
			t.Errorf("%s has raw controls: %q", f, b.String())
		}
	}
}
