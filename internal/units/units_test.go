package units

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"4k", 4096, true}, {"1M", 1 << 20, true}, {"22m", 22 << 20, true}, {"1GiB", 1 << 30, true},
		{"300Gi", 300 << 30, true}, {"2300", 2300, true}, {"1.5k", 1536, true}, {" 8 G ", 8 << 30, true},
		{"0", 0, true},
		{"", 0, false}, {"-1", 0, false}, {"NaN", 0, false}, {"Inf", 0, false}, {"1e3", 0, false},
		{"0x10", 0, false}, {"4q", 0, false}, {"99999999999999999999T", 0, false}, {"8E", 0, false},
		{"1..2k", 0, false},
	} {
		got, err := ParseSize(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d ok=%v", c.in, got, err, c.want, c.ok)
		}
		var ve *ValueError
		if err != nil && (!errors.As(err, &ve) || ve.Hint() == "") {
			t.Errorf("ParseSize(%q): error %v has no hint", c.in, err)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"20", 20 * time.Second, true}, {"2.5", 2500 * time.Millisecond, true}, {"3s", 3 * time.Second, true},
		{"500ms", 500 * time.Millisecond, true}, {"1m30s", 90 * time.Second, true}, {"2h", 2 * time.Hour, true},
		{"0", 0, true}, {"14d", 14 * 24 * time.Hour, true}, {"1.5d", 36 * time.Hour, true},
		{"", 0, false}, {"99999999d", 0, false}, {"-1s", 0, false}, {"-1", 0, false}, {"NaN", 0, false}, {"Inf", 0, false},
		{"+Inf", 0, false}, {"1e9", 0, false}, {"10x", 0, false}, {"9999999999999999999", 0, false},
		{"99999999h", 0, false},
	} {
		got, err := ParseDuration(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestParseRate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"25MB/s", 25e6, true}, {"128MiB/s", 128 << 20, true}, {"500KiB", 500 << 10, true}, {"1000B/s", 1000, true}, {"0", 0, true},
		{"1000", 0, false}, {"125", 0, false}, {"125/s", 0, false},
		{"25M", 0, false}, {"NaN", 0, false}, {"-5MB/s", 0, false}, {"1e300GB", 0, false}, {"", 0, false},
	} {
		got, err := ParseRate(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestParseCountAndNumber(t *testing.T) {
	if n, err := ParseCount("32", 1, 1024); err != nil || n != 32 {
		t.Errorf("ParseCount(32) = %d, %v", n, err)
	}
	for _, in := range []string{"0", "-1", "1025", "1.5", "NaN", "99999999999999999999", ""} {
		if _, err := ParseCount(in, 1, 1024); err == nil {
			t.Errorf("ParseCount(%q) accepted", in)
		}
	}
	if v, err := ParseNumber("6000", 0, 1e9); err != nil || v != 6000 {
		t.Errorf("ParseNumber(6000) = %v, %v", v, err)
	}
	for _, in := range []string{"NaN", "Inf", "-3", "1e3", "5x", "2e9", ""} {
		if _, err := ParseNumber(in, 0, 1e9); err == nil {
			t.Errorf("ParseNumber(%q) accepted", in)
		}
	}
}

func TestFlags(t *testing.T) {
	var d Duration
	if err := d.Set("3s"); err != nil || time.Duration(d) != 3*time.Second {
		t.Errorf("Duration.Set(3s) = %v, %v", d, err)
	}
	if err := d.Set("NaN"); err == nil {
		t.Error("Duration.Set(NaN) accepted")
	}
	var z Size
	if err := z.Set("99999999999999999999T"); err == nil {
		t.Error("Size.Set overflow accepted")
	}
	c := Count{Min: 1, Max: 10}
	if err := c.Set("11"); err == nil {
		t.Error("Count.Set(11) accepted")
	}
	var f float64
	n := Number{P: &f, Max: 100}
	if err := n.Set("2.5"); err != nil || f != 2.5 || n.String() != "2.5" {
		t.Errorf("Number.Set(2.5) = %v, %v", f, err)
	}
	for _, bad := range []string{"NaN", "Inf", "-1", "101", "x"} {
		if err := n.Set(bad); err == nil || f != 2.5 {
			t.Errorf("Number.Set(%q) accepted (%v)", bad, f)
		}
	}
	var sec Seconds
	if err := sec.Set("1m30s"); err != nil || sec != 90 || sec.String() != "1m30s" {
		t.Errorf("Seconds.Set(1m30s) = %v, %v", sec, err)
	}
	if err := sec.Set("20"); err != nil || sec != 20 {
		t.Errorf("Seconds.Set(20) = %v, %v", sec, err)
	}
	if err := sec.Set("-1s"); err == nil {
		t.Error("Seconds.Set(-1s) accepted")
	}
}

// The parsers never panic and never return a value they were meant to
// refuse.
func FuzzParsers(f *testing.F) {
	for _, s := range []string{"4k", "1GiB", "NaN", "-1", "1m30s", "99999999999999999999T", "25MB/s", "1e400", ".", "..", "0.0000001s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseSize(s); err == nil && v < 0 {
			t.Errorf("ParseSize(%q) = %d", s, v)
		}
		if v, err := ParseDuration(s); err == nil && v < 0 {
			t.Errorf("ParseDuration(%q) = %v", s, v)
		}
		if v, err := ParseRate(s); err == nil && (v < 0 || math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Errorf("ParseRate(%q) = %v", s, v)
		}
		if v, err := ParseNumber(s, 0, 1e12); err == nil && (v < 0 || v > 1e12 || math.IsNaN(v)) {
			t.Errorf("ParseNumber(%q) = %v", s, v)
		}
		if v, err := ParseTime(s); err == nil && (v.Year() < 0 || v.Year() > 9999) {
			t.Errorf("ParseTime(%q) = %v", s, v)
		}
	})
}

func TestFormatters(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Figure(12345.4), "12,345"}, {Figure(12.34), "12.3"}, {Figure(1.234), "1.23"}, {Figure(-1500), "-1,500"},
		{Commas(1234567), "1,234,567"}, {Commas(999), "999"},
		{Latency(850), "850 ns"}, {Latency(70100), "70.1 µs"}, {Latency(2.5e6), "2.5 ms"}, {Latency(1.2e9), "1.2 s"},
		{Millis(0), "0"}, {Millis(70e3), "0.070"}, {Millis(2.5e6), "2.50"}, {Millis(120.4e6), "120"},
		{PercentileMillis(0), "-"}, {PercentileMillis(2.5e6), "2.50"},
		{MB(125e6), "125.0"}, {Whole(12345.6), "12346"},
		{Published(3000), "3,000"}, {Published(125), "125"}, {Published(0.5), "0.5"},
		{Trim(1.50, 2), "1.5"}, {Trim(2, 2), "2"}, {Trim(100, 3), "100"},
		{MBps(125e6), "125 MB/s"}, {IOPS(12.5), "12.5 IOPS"},
		{PerSecond(3000, "iops"), "3,000 IOPS"}, {PerSecond(12.5e6, "bytes"), "12.5 MB/s"},
		{PlainRate(12345.6, "iops"), "12346 IOPS"}, {PlainRate(250.3e6, "bytes"), "250.3 MB/s"},
		{Span(0, "unlimited"), "unlimited"}, {Span(45, ""), "45 s"}, {Span(750, ""), "12.5 min"}, {Span(5400, ""), "1.5 h"},
		{FormatDuration(90 * time.Second), "90 s"},
		{BytesSI(1.5e9), "1.5 GB"}, {BytesSI(12.34e6), "12.3 MB"}, {BytesSI(512e3), "512 kB"}, {BytesSI(100), "100 B"},
		{KiB(0), "0"}, {KiB(4096), "4.0k"},
		{Ms(0.0005, 4), "0.5 ms"}, {Ms(0.01225, 4), "12.25 ms"}, {Ms(1.5, 3), "1500 ms"}, {Ms(math.Inf(1), 3), "-"},
		{Share(0.125), "12.5%"}, {Share(0.0001), "<0.1%"}, {Share(0), "0.0%"},
		{Exact(3000), "3000"}, {Exact(0.125), "0.125"},
		{FormatIOPS(0), "no cap"}, {FormatIOPS(3000.4), "3,000 IOPS"},
		{USD(1638), "$1,638"}, {USD(3), "$3.00"}, {USD(0.27), "$0.2700"}, {USD(0.00511), "$0.0051"}, {USD(0), "$0"}, {SignedUSD(-3.5), "-$3.50"}, {SignedUSD(12), "+$12.00"}, {SignedUSD(0), "+$0"},
		{Dollars(8), "8.00"}, {Dollars(8.0 / 3000), "0.0027"},
		{Measure(400, "iops"), "400 IOPS"}, {Measure(2.5e6, "ns"), "2.50 ms"}, {Measure(1<<20, "bytes/s"), "1 MiB/s"}, {Measure(3, "x"), "3"},
		{Chart(0), "0"}, {Chart(0.1234), "0.123"}, {Chart(12.34), "12.3"}, {Chart(1234), "1234"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if n, u := SpanWords(45); n != "45" || u != "seconds" {
		t.Errorf("SpanWords(45) = %s %s", n, u)
	}
	if n, u := SpanWords(720); n != "12" || u != "minutes" {
		t.Errorf("SpanWords(720) = %s %s", n, u)
	}
	if n, u := SpanWords(3 * 3600); n != "3" || u != "hours" {
		t.Errorf("SpanWords(3h) = %s %s", n, u)
	}
}

func TestParseLabel(t *testing.T) {
	for _, s := range []string{"team=storage", "app.kubernetes.io/name=db", "empty=", "k=v=w", "k=zoné 1"} {
		if _, _, err := ParseLabel(s); err != nil {
			t.Errorf("%q refused: %v", s, err)
		}
	}
	for s, want := range map[string]string{
		"novalue":                       "no key",
		"=v":                            "no key",
		"a b=c":                         "in the key",
		strings.Repeat("k", 64) + "=v":  "key longer",
		"k=" + strings.Repeat("v", 257): "longer than 256",
		"k=\x1b]0;title\a":              "control character",
		"k=red\x1b[31m":                 "control character",
		"k=\xff\xfe":                    "not UTF-8",
		"k=line\nbreak":                 "control character",
	} {
		_, _, err := ParseLabel(s)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", s, err, want)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\x1b\a\n") {
			t.Errorf("%q: the error carries the control character: %q", s, err)
		}
	}
}

func TestNouns(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 tests"}, {1, "1 test"}, {2, "2 tests"}, {1234, "1,234 tests"}} {
		if got := Nouns(c.n, "test", "tests"); got != c.want {
			t.Errorf("Nouns(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestRatio(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{{81.735, "82×"}, {2.54, "2.5×"}, {12000, "12,000×"}, {math.Inf(1), "-"}} {
		if got := Ratio(c.x); got != c.want {
			t.Errorf("Ratio(%g) = %q, want %q", c.x, got, c.want)
		}
	}
}
