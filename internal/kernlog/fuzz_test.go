package kernlog

import (
	"strings"
	"testing"
)

// Whatever the log holds, scanning it keeps at most maxLines lines, each
// at most maxLineText bytes (and the "..." after a cut) and naming an
// error.
func FuzzScan(f *testing.F) {
	f.Add("3,1002,9000000,-;I/O error, dev loop7, sector 133120 op 0x0:(READ)\n", "loop7")
	f.Add("6,1,notanumber,-;error loop7\n;;;\n3,2,1,-;\n", "loop7")
	f.Add(strings.Repeat("3,1,1,-;error sda "+strings.Repeat("x", 300)+"\n", 20), "sda")
	f.Fuzz(func(t *testing.T, log, dev string) {
		l, err := scan(strings.NewReader(log), []string{dev}, 0)
		if err != nil {
			return
		}
		if len(l.Lines) > maxLines || l.Count < len(l.Lines) {
			t.Fatalf("%d lines of %d", len(l.Lines), l.Count)
		}
		for _, s := range l.Lines {
			if len(s) > maxLineText+3 || len(s) <= maxLineText && !strings.Contains(strings.ToLower(s), "error") {
				t.Fatalf("line %q", s)
			}
		}
	})
}
