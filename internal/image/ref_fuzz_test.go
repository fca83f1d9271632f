package image

import (
	"strings"
	"testing"
)

// FuzzParseRef: an image reference given to 'iolens-image' or read from
// a release. What parses is a tag, never latest.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{Reference("0.2.0"), "ghcr.io/iolens/iolens", "x:latest", "x@sha256:" + strings.Repeat("a", 64), "../x:1", "X:1", ":1", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tag, err := ParseRef(s)
		if err != nil {
			return
		}
		if tag.TagStr() == "" || tag.TagStr() == "latest" {
			t.Fatalf("ParseRef(%q) = tag %q", s, tag.TagStr())
		}
	})
}
