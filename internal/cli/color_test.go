package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestColorWriter(t *testing.T) {
	var b bytes.Buffer
	w := colorWriter{&b}
	line := "  [fail] t: etcd FAIL\n  [warn] u: x\n  [info] v: PASS\n"
	n, err := w.Write([]byte(line))
	if err != nil || n != len(line) {
		t.Fatalf("wrote %d, %v", n, err)
	}
	got := b.String()
	for _, want := range []string{"\x1b[1;31m[fail]\x1b[0m", "\x1b[1;31mFAIL\x1b[0m", "\x1b[33m[warn]\x1b[0m", "\x1b[32mPASS\x1b[0m", "[info] v"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in %q", want, got)
		}
	}
	// Not a terminal (a buffer, a file, a pipe): no colour at all.
	if colorOut(&b) != &b {
		t.Error("a buffer got colour")
	}
}

// TestReportOutPlainText: a label holding terminal control sequences
// reaches text, Markdown and CSV reports as '?', JSON escaped, and the
// report's own layout (newlines, tabs, UTF-8) untouched.
func TestReportOutPlainText(t *testing.T) {
	in := "label \x1b]0;title\a red\x1b[31m del\x7f c1\u009b é\ttab\n"
	for _, f := range []string{"text", "md", "csv"} {
		var b bytes.Buffer
		if _, err := reportOut(&b, f).Write([]byte(in)); err != nil {
			t.Fatal(err)
		}
		if got, want := b.String(), "label ?]0;title? red?[31m del? c1?? é\ttab\n"; got != want {
			t.Errorf("%s: %q, want %q", f, got, want)
		}
	}
	var b bytes.Buffer
	_, _ = reportOut(&b, "json").Write([]byte(in))
	if b.String() != in {
		t.Errorf("json changed: %q", b.String())
	}
}
