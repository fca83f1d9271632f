package units

import (
	"math"
	"strings"
	"time"
)

const timeWant = "an RFC 3339 time such as 2026-03-01T14:00:00Z or 2026-03-01T15:00:00+01:00, or Unix seconds such as 1772373600"

// ParseTime reads an instant: RFC 3339 (with its zone), or seconds since
// the Unix epoch, as Prometheus's API takes them (1772373600, 1772373600.5).
// It refuses NaN, infinities, negatives and years past 9999.
func ParseTime(s string) (time.Time, error) {
	t := strings.TrimSpace(s)
	bad := func(why string) error { return &ValueError{Kind: "time", Value: s, Why: why, Want: timeWant} }
	if t == "" {
		return time.Time{}, bad("empty")
	}
	if strings.ContainsAny(t, "T:-") && !strings.HasPrefix(t, "-") {
		v, err := time.Parse(time.RFC3339Nano, t)
		if err != nil {
			return time.Time{}, bad("not RFC 3339 (date, 'T', time and zone: Z or +01:00)")
		}
		return v, nil
	}
	v, rest, err := number("time", t, timeWant)
	if err != nil {
		err.(*ValueError).Kind = "time"
		return time.Time{}, err
	}
	if rest != "" {
		return time.Time{}, bad("not a number of seconds")
	}
	const maxUnix = 253402300799 // 9999-12-31T23:59:59Z
	if v > maxUnix {
		return time.Time{}, bad("too far in the future")
	}
	sec, frac := math.Modf(v)
	return time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC(), nil
}
