package report

import (
	"strings"
	"testing"
)

// Issue 39.8: the words a newcomer meets carry their meaning as a hover
// title, the text around them escaped, words that only contain them left
// alone.
func TestGlossed(t *testing.T) {
	got := string(glossed(`read: 3,501 IOPS ±5.9% at QD32; QD1 285 µs, knee at QD2; p99 <8 ms & kneecap QDX`))
	for _, want := range []string{`<abbr title="±: how sure`, `>±</abbr>5.9%`, `>QD32</abbr>`, `>QD1</abbr>`, `>knee</abbr>`, `>p99</abbr>`, `&lt;8 ms &amp; kneecap QDX`} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "<abbr") != 6 {
		t.Errorf("%d terms marked, want 6:\n%s", strings.Count(got, "<abbr"), got)
	}
	for _, term := range Glossary {
		if _, ok := termOf(term.Word); !ok {
			t.Errorf("%s: no entry found for its own word", term.Word)
		}
	}
}
