package units

import (
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"2026-03-01T14:00:00Z", time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)},
		{"2026-03-01T15:00:00+01:00", time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)},
		{"2026-03-01T14:00:00.250Z", time.Date(2026, 3, 1, 14, 0, 0, 250e6, time.UTC)},
		{"1772373600", time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)},
		{" 1772373600.5 ", time.Date(2026, 3, 1, 14, 0, 0, 500e6, time.UTC)},
		{"0", time.Unix(0, 0)},
	} {
		got, err := ParseTime(tc.in)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseTime(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "yesterday", "2026-03-01", "2026-03-01 14:00:00", "2026-03-01T14:00:00", "-5", "1e9", "NaN", "Inf",
		"0x10", "1772373600s", "99999999999999", "+5"} {
		if got, err := ParseTime(in); err == nil {
			t.Errorf("ParseTime(%q) = %s, want an error", in, got)
		} else if err.(*ValueError).Hint() == "" {
			t.Errorf("ParseTime(%q): no hint", in)
		}
	}
}
