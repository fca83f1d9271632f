package units

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/hint"
)

func TestQuantityCheck(t *testing.T) {
	for _, c := range []struct {
		q    Quantity
		v    float64
		ok   bool
		why  string
		name string
	}{
		{IOPSFigure, 12048.5, true, "", "a measured rate"},
		{IOPSFigure, 0, true, "", "no IO is a measurement"},
		{IOPSFigure, 1e308, false, "out of range", "absurd"},
		{IOPSFigure, -1, false, "negative", "negative"},
		{IOPSFigure, math.NaN(), false, "not a number", "NaN"},
		{IOPSFigure, math.Inf(1), false, "infinite", "Inf"},
		{PercentFigure, 100, true, "", "a busy device"},
		{PercentFigure, math.Inf(1), false, "infinite", "util +Inf"},
		{TimeOffsetFigure, -3, true, "", "a sample in the ramp"},
		{PressureFigure, -1, true, "", "no PSI"},
		{PressureFigure, -2, false, "negative", "below the sentinel"},
		{LatencyNsFigure, 1e15, false, "out of range", "eleven days"},
	} {
		err := c.q.Check("read.iops", c.v)
		if (err == nil) != c.ok {
			t.Errorf("%s: Check(%v) = %v, want ok=%v", c.name, c.v, err, c.ok)
			continue
		}
		if err == nil {
			if c.q.Or(c.v) != c.v {
				t.Errorf("%s: Or(%v) = %v", c.name, c.v, c.q.Or(c.v))
			}
			continue
		}
		var fe *FigureError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "read.iops") || !strings.Contains(err.Error(), c.why) || hint.Of(err) == "" {
			t.Errorf("%s: %v (hint %q): want a FigureError naming read.iops, %q", c.name, err, hint.Of(err), c.why)
		}
		if !math.IsNaN(c.q.Or(c.v)) {
			t.Errorf("%s: Or(%v) = %v, want NaN (unknown)", c.name, c.v, c.q.Or(c.v))
		}
	}
}

// figureFormatters are every formatter of a float figure, each as a
// function of one value.
var figureFormatters = map[string]func(float64) string{
	"HumanBytes": HumanBytes, "FormatRate": FormatRate, "FormatSeconds": FormatSeconds, "Figure": Figure,
	"Latency": Latency, "Millis": Millis, "MB": MB, "Whole": Whole, "Published": Published,
	"Trim": func(v float64) string { return Trim(v, 2) }, "MBps": MBps, "IOPS": IOPS,
	"Span": func(v float64) string { return Span(v, "none") }, "PercentileMillis": PercentileMillis, "Chart": Chart,
	"PerSecond": func(v float64) string { return PerSecond(v, "iops") }, "PlainRate": func(v float64) string { return PlainRate(v, "iops") },
	"BytesSI": BytesSI, "KiB": KiB, "SpanWords": func(v float64) string { n, u := SpanWords(v); return n + " " + u },
	"Ms": func(v float64) string { return Ms(v, 3) }, "Share": Share, "Exact": Exact, "FormatIOPS": FormatIOPS, "USD": USD,
	"Measure": func(v float64) string { return Measure(v, "iops") }, "Dollars": Dollars,
	"LatencyBand": func(v float64) string { return LatencyBand(v, v) },
}

// checkPrinted fails when a formatter printed x as something no figure
// reads as: NaN or Inf spelt out, a number of absurd length, or a sign
// that is not x's (an integer wrapped round).
func checkPrinted(t *testing.T, name string, x float64, s string) {
	t.Helper()
	low := strings.ToLower(s)
	if strings.Contains(low, "nan") || strings.Contains(low, "inf") {
		t.Errorf("%s(%v) = %q: a non-finite figure printed", name, x, s)
	}
	if len(s) > 40 && (x == 0 || math.Abs(x) >= 1e-9) {
		t.Errorf("%s(%v) = %q: longer than any figure", name, x, s)
	}
	if x >= 0 && len(s) > 1 && s[0] == '-' && s[1] >= '0' && s[1] <= '9' {
		t.Errorf("%s(%v) = %q: a negative printed for a positive figure (wrapped)", name, x, s)
	}
}

func TestFormattersNeverWrap(t *testing.T) {
	for name, f := range figureFormatters {
		for _, x := range []float64{1e308, 9.3e18, 1e19, math.MaxFloat64, math.NaN(), math.Inf(1), math.Inf(-1)} {
			checkPrinted(t, name, x, f(x))
		}
	}
	if got := Figure(1e308); got != "-" {
		t.Errorf("Figure(1e308) = %q, want - (unknown)", got)
	}
	if got := IOPS(1e19); got != "- IOPS" {
		t.Errorf("IOPS(1e19) = %q, want - IOPS", got)
	}
}

// Every formatter prints every float as a figure or "-": never NaN or
// Inf spelt out, never an integer wrapped round.
func FuzzFormatters(f *testing.F) {
	for _, x := range []float64{0, 1, -1, 1e308, 9.3e18, 9.223372036854775807e18, 1.8e19, math.NaN(), math.Inf(1), 5e-324} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		for name, fn := range figureFormatters {
			checkPrinted(t, name, x, fn(x))
		}
	})
}
