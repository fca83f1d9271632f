package units

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// ParseFioTime reads a fio time value: a bare number in the option's
// unit, or a number with one of fio's suffixes (us, usec, ms, msec, s,
// sec, m, min, h, d). Negative, NaN and infinite times, and times longer
// than most, are refused.
func ParseFioTime(v string, unit, most time.Duration) (time.Duration, error) {
	want := fmt.Sprintf("a time such as 30 (%s), 500ms, 20s, 5m or 2h, at most %s", fioUnitName(unit), most)
	t := strings.TrimSpace(v)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, suffix := t[:i], strings.ToLower(t[i:])
	if num == "" {
		why := "not a number"
		if strings.HasPrefix(t, "-") {
			why = "negative"
		}
		return 0, &ValueError{Kind: "duration", Value: v, Why: why, Want: want}
	}
	x, err := ParseNumber(num, 0, float64(most))
	if err != nil {
		return 0, &ValueError{Kind: "duration", Value: v, Why: err.(*ValueError).Why, Want: want}
	}
	mult := map[string]time.Duration{"": unit, "us": time.Microsecond, "usec": time.Microsecond,
		"ms": time.Millisecond, "msec": time.Millisecond, "s": time.Second, "sec": time.Second,
		"m": time.Minute, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[suffix]
	if mult == 0 {
		return 0, &ValueError{Kind: "duration", Value: v, Why: fmt.Sprintf("unknown unit %q", suffix), Want: want}
	}
	f := x * float64(mult)
	if f > float64(most) {
		return 0, &ValueError{Kind: "duration", Value: v, Why: "too long", Want: want}
	}
	return time.Duration(math.Round(f)), nil
}

func fioUnitName(u time.Duration) string {
	if u == time.Second {
		return "seconds"
	}
	return "microseconds"
}
