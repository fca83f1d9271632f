package promhist

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/units"
)

func TestRangeWindow(t *testing.T) {
	now := time.Date(2026, 3, 1, 15, 0, 0, 0, time.UTC)
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	for _, tc := range []struct {
		r        Range
		from, to time.Time
		err      string
	}{
		{Range{}, now.Add(-time.Hour), now, ""},
		{Range{Since: units.Duration(6 * time.Hour), SinceSet: true}, now.Add(-6 * time.Hour), now, ""},
		{Range{From: "2026-03-01T13:00:00Z"}, at("2026-03-01T13:00:00Z"), now, ""},
		{Range{From: "2026-03-01T13:00:00Z", To: "2026-03-01T14:00:00Z"}, at("2026-03-01T13:00:00Z"), at("2026-03-01T14:00:00Z"), ""},
		{Range{SinceSet: true, From: "2026-03-01T13:00:00Z"}, time.Time{}, time.Time{}, "--since with --from"},
		{Range{From: "yesterday"}, time.Time{}, time.Time{}, "--from"},
		{Range{To: "2026-03-01T14:00:00Z"}, time.Time{}, time.Time{}, "--to without --from"},
		{Range{From: "2026-03-01T15:00:00Z", To: "2026-03-01T14:00:00Z"}, time.Time{}, time.Time{}, "is empty"},
	} {
		from, to, err := tc.r.Window(now, time.Hour)
		var u *hint.UsageError
		switch {
		case tc.err == "" && (err != nil || !from.Equal(tc.from) || !to.Equal(tc.to)):
			t.Errorf("%+v: %v to %v, %v; want %v to %v", tc.r, from, to, err, tc.from, tc.to)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &u) || hint.Of(err) == ""):
			t.Errorf("%+v: %v; want a usage error with a hint about %q", tc.r, err, tc.err)
		}
	}
}
