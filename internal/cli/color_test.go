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
