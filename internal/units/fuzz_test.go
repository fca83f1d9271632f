package units

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzParseCount: what parses is a whole number within the bounds asked.
func FuzzParseCount(f *testing.F) {
	for _, s := range []string{"1", "32", "-1", "0x10", "1e3", "9223372036854775808", " 7 ", "NaN"} {
		f.Add(s, int64(0), int64(1024))
	}
	f.Fuzz(func(t *testing.T, s string, lo, hi int64) {
		if v, err := ParseCount(s, lo, hi); err == nil && (v < lo || v > hi) {
			t.Fatalf("ParseCount(%q, %d, %d) = %d", s, lo, hi, v)
		}
	})
}

// FuzzParsePrecision: what parses is a relative precision from 0.1% to 50%.
func FuzzParsePrecision(f *testing.F) {
	for _, s := range []string{"2%", "0.05", "50%", "0.1 %", "NaN%", "-2%", "1e-3", "100"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParsePrecision(s); err == nil && !(v >= 0.001 && v <= 0.5) {
			t.Fatalf("ParsePrecision(%q) = %v", s, v)
		}
	})
}

// FuzzParseLabel: a label that parses has a short key of the allowed
// characters and a value of printable UTF-8 (a terminal would obey a
// control character when a report prints it).
func FuzzParseLabel(f *testing.F) {
	for _, s := range []string{"team=storage", "app.kubernetes.io/name=x", "=v", "k=", "k=\x1b[2J", "k=a=b", "k\xff=v", strings.Repeat("k", 64) + "=v"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, v, err := ParseLabel(s)
		if err != nil {
			return
		}
		if k == "" || len(k) > MaxLabelKey || len(v) > MaxLabelValue || !utf8.ValidString(v) || k+"="+v != s {
			t.Fatalf("ParseLabel(%q) = %q, %q", s, k, v)
		}
		for _, r := range k {
			if !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_./", r))) {
				t.Fatalf("key %q has %q", k, r)
			}
		}
		for _, r := range v {
			if unicode.IsControl(r) {
				t.Fatalf("value %q has a control character", v)
			}
		}
	})
}
