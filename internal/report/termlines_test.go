package report

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Issue 39.4: verdict lines a terminal holds: a long line breaks between
// its figures (never inside brackets), then between words, each piece
// under the width, the pieces after the first under the first's text;
// nothing is lost.
func TestTermLines(t *testing.T) {
	in := "write: 5,048 IOPS ±0.2% at QD32 (past the knee, no plateau measured: the ceiling is this or higher); 200 MB/s ±2.3% at QD8 (a flat bandwidth cap; one depth measured); QD1 4 ms per IO (244 IOPS)"
	got := termLines(in, termWidth)
	if len(got) < 3 {
		t.Fatalf("%d lines: %q", len(got), got)
	}
	if got[0][:12] != "write: 5,048" {
		t.Errorf("first line %q", got[0])
	}
	for i, l := range got {
		if utf8.RuneCountInString(l) > termWidth {
			t.Errorf("line %d is %d wide: %q", i, utf8.RuneCountInString(l), l)
		}
		if i > 0 && !strings.HasPrefix(l, "       ") {
			t.Errorf("line %d not under the text: %q", i, l)
		}
	}
	if !strings.Contains(strings.Join(got, "\n"), "(a flat bandwidth cap; one depth measured);") {
		t.Errorf("broken inside brackets: %q", got)
	}
	if strings.Join(strings.Fields(strings.Join(got, " ")), " ") != strings.Join(strings.Fields(in), " ") {
		t.Errorf("words lost or moved:\n%q", got)
	}
	if short := "fsync: p99 8.45 ms"; len(termLines(short, termWidth)) != 1 {
		t.Errorf("a short line broken")
	}
}
