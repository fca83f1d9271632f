package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/iolens/iolens/internal/termtext"
)

// ValueError is a value that does not parse or is out of range. Its hint
// says what is accepted.
type ValueError struct {
	Kind  string // "size", "duration", "rate", "count", "number"
	Value string
	// Why says what is wrong with it, Want what is accepted.
	Why, Want string
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("invalid %s %q: %s", e.Kind, e.Value, e.Why)
}

// Hint says what is accepted.
func (e *ValueError) Hint() string { return "want " + e.Want }

const (
	sizeWant     = "a byte size such as 4k, 1M, 22m, 1GiB or 300Gi (binary units), 0 or more"
	durationWant = "a duration such as 500ms, 20s, 1m30s, 2h or 14d, or plain seconds (20, 2.5), 0 or more"
	rateWant     = "a rate with its unit, such as 25MB/s (10^6 B/s), 128MiB/s (2^20 B/s) or 4096B/s, or 0"
)

// number splits s into its leading decimal number and the rest, and
// refuses what strconv would accept but a person never means: NaN, Inf,
// hex, exponents and signs.
func number(kind, s, want string) (float64, string, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	bad := func(why string) error { return &ValueError{Kind: kind, Value: s, Why: why, Want: want} }
	if t == "" {
		return 0, "", bad("empty")
	}
	if i == 0 {
		if t[0] == '-' {
			return 0, "", bad("negative")
		}
		return 0, "", bad("not a number")
	}
	v, err := strconv.ParseFloat(t[:i], 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, "", bad("not a number")
	}
	return v, strings.TrimSpace(t[i:]), nil
}

// ParseSize reads a byte size the way fio and Kubernetes users write it:
// "4k", "1M", "22m", "1GiB", "300Gi", "2300". Suffixes are binary (1024),
// as fio's default kb_base is. It refuses negatives, NaN, infinities and
// sizes that do not fit in an int64.
func ParseSize(s string) (int64, error) {
	v, unit, err := number("size", s, sizeWant)
	if err != nil {
		return 0, err
	}
	u := strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(unit), "b"), "i")
	mult := map[string]float64{"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}[u]
	if mult == 0 {
		return 0, &ValueError{Kind: "size", Value: s, Why: fmt.Sprintf("unknown unit %q", unit), Want: sizeWant}
	}
	b := v * mult
	if b >= math.MaxInt64 {
		return 0, &ValueError{Kind: "size", Value: s, Why: "too large (at most 8 EiB)", Want: sizeWant}
	}
	return int64(b), nil
}

// maxDuration is what a time.Duration holds, about 292 years.
const maxDuration = float64(math.MaxInt64)

// ParseDuration reads a duration: a Go duration ("500ms", "1m30s", "2h")
// or plain seconds ("20", "2.5"). It refuses negatives, NaN, infinities
// and durations that overflow.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	bad := func(why string) error {
		return &ValueError{Kind: "duration", Value: s, Why: why, Want: durationWant}
	}
	if strings.HasPrefix(t, "-") {
		return 0, bad("negative")
	}
	v, unit, err := number("duration", s, durationWant)
	if err != nil {
		return 0, err
	}
	if unit == "" { // plain seconds
		if v*float64(time.Second) >= maxDuration {
			return 0, bad("too long")
		}
		return time.Duration(math.Round(v * float64(time.Second))), nil
	}
	if unit == "d" { // days, as people say a range: 14d
		if v*float64(24*time.Hour) >= maxDuration {
			return 0, bad("too long")
		}
		return time.Duration(math.Round(v * float64(24*time.Hour))), nil
	}
	d, err := time.ParseDuration(strings.TrimPrefix(t, "+"))
	if err != nil {
		if strings.Contains(err.Error(), "overflow") {
			return 0, bad("too long")
		}
		return 0, bad("not a duration")
	}
	if d < 0 {
		return 0, bad("negative")
	}
	return d, nil
}

// ParseRate reads a bandwidth in bytes per second: a number with a unit
// that says its base, "25MB/s" or "25MB" (10^6 B/s), "128MiB/s" (2^20),
// "500KiB", "1GB", "4096B/s", or 0. "25M" is refused: the cloud catalog
// mixes both bases, so the unit must say which; so is a bare "125", which
// a person means as MB/s far more often than as bytes per second.
func ParseRate(s string) (float64, error) {
	v, unit, err := number("rate", strings.TrimSuffix(strings.TrimSpace(s), "/s"), rateWant)
	if err != nil {
		err.(*ValueError).Value = s
		return 0, err
	}
	if unit == "" && v != 0 {
		return 0, &ValueError{Kind: "rate", Value: s, Why: "no unit (bytes per second take B/s: " + strings.TrimSpace(s) + "B/s)", Want: rateWant}
	}
	mult, ok := map[string]float64{"": 1, "B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9,
		"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]
	if !ok {
		return 0, &ValueError{Kind: "rate", Value: s, Why: fmt.Sprintf("unit %q must be B, KB, MB, GB (10^3 steps) or KiB, MiB, GiB (2^10 steps)", unit), Want: rateWant}
	}
	if r := v * mult; r < math.MaxFloat64 && r < 1e18 {
		return r, nil
	}
	return 0, &ValueError{Kind: "rate", Value: s, Why: "too large", Want: rateWant}
}

// ParseCount reads a whole number between lo and hi inclusive, such as a
// queue depth, a repeat count or an IOPS figure.
func ParseCount(s string, lo, hi int64) (int64, error) {
	want := fmt.Sprintf("a whole number from %d to %d", lo, hi)
	t := strings.TrimSpace(s)
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		why := "not a whole number"
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			why = "out of range"
		}
		return 0, &ValueError{Kind: "count", Value: s, Why: why, Want: want}
	}
	if n < lo || n > hi {
		return 0, &ValueError{Kind: "count", Value: s, Why: "out of range", Want: want}
	}
	return n, nil
}

// ParseNumber reads a finite decimal number between lo and hi inclusive,
// such as an IOPS or MB/s figure in a disk spec.
func ParseNumber(s string, lo, hi float64) (float64, error) {
	want := fmt.Sprintf("a number from %g to %g", lo, hi)
	v, rest, err := number("number", s, want)
	if err == nil && rest != "" {
		err = &ValueError{Kind: "number", Value: s, Why: "not a number", Want: want}
	}
	if err != nil {
		return 0, err
	}
	if v < lo || v > hi {
		return 0, &ValueError{Kind: "number", Value: s, Why: "out of range", Want: want}
	}
	return v, nil
}

// FormatSize prints a byte count with a binary suffix, exactly when it can
// ("4k", "1M", "1536k", "2300").
func FormatSize(n int64) string {
	units := []string{"", "k", "M", "G", "T"}
	u := 0
	for u < len(units)-1 && n != 0 && n%1024 == 0 {
		n /= 1024
		u++
	}
	return strconv.FormatInt(n, 10) + units[u]
}

// IOSize prints an IO size for people, exactly and with its unit: 4 KiB,
// 1 MiB, 2,300 B.
func IOSize(n int64) string {
	names := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	u := 0
	for u < len(names)-1 && n != 0 && n%1024 == 0 {
		n /= 1024
		u++
	}
	return Commas(n) + " " + names[u]
}

// HumanBytes prints a byte count rounded, in binary units, for people.
func HumanBytes(n float64) string {
	if !printable(n) {
		return "-"
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	u := 0
	for u < len(units)-1 && n >= 1024 {
		n /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%.0f %s", n, units[u])
	}
	return fmt.Sprintf("%.1f %s", n, units[u])
}

// FormatRate prints bytes per second in MB/s (10^6) and, when it is a
// round figure there, in MiB/s; 0 or less is "no cap".
func FormatRate(bps float64) string {
	if !printable(bps) {
		return "-"
	}
	if bps <= 0 {
		return "no cap"
	}
	if m := bps / (1 << 20); m == float64(int64(m)) {
		return fmt.Sprintf("%g MiB/s", m)
	}
	return fmt.Sprintf("%.4g MB/s", bps/1e6)
}

// Clock prints a duration as minutes and seconds, "02:05", as progress
// lines show elapsed and remaining time.
func Clock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%02d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

// FormatSeconds prints a duration in seconds for people: "45 s", "2.5 s",
// "12 min", "1.5 h".
func FormatSeconds(s float64) string {
	if !printable(s) {
		return "-"
	}
	switch {
	case s >= 5400:
		return fmt.Sprintf("%.3g h", s/3600)
	case s >= 120:
		return fmt.Sprintf("%.3g min", s/60)
	case s >= 10:
		return fmt.Sprintf("%.0f s", s)
	}
	return fmt.Sprintf("%.2g s", s)
}

// Figure prints a measured figure for people: "12,345", "12.3", "1.23".
func Figure(x float64) string {
	switch {
	case !printable(x):
		return "-"
	case math.Abs(x) >= 100:
		return Commas(int64(math.Round(x)))
	case math.Abs(x) >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

// Commas prints an integer with thousands separators: "1,234,567".
func Commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Latency prints a latency given in ns with a unit that suits it: "850 ns",
// "70.1 µs", "2.5 ms", "1.2 s".
func Latency(ns float64) string {
	if !printable(ns) {
		return "-"
	}
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.3g s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

// ParsePrecision reads a relative precision: "2%", "2 %" or "0.02",
// from 0.1% to 50%.
func ParsePrecision(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := ParseNumber(strings.TrimSpace(strings.TrimSuffix(t, "%")), 0, 100)
	if err != nil {
		return 0, err
	}
	if pct || v >= 1 {
		v /= 100
	}
	if v < 0.001 || v > 0.5 {
		return 0, fmt.Errorf("precision %q: want 0.1%% to 50%%", s)
	}
	return v, nil
}

// Label limits: a key is a short name, a value a line of printable text.
const (
	MaxLabelKey   = 63
	MaxLabelValue = 256
)

// ParseLabel splits key=value and checks both: the key is 1 to 63
// letters, digits, '-', '_', '.' or '/'; the value at most 256 bytes of
// printable UTF-8 (no control characters, which a terminal would obey
// when a report prints the label).
func ParseLabel(s string) (key, value string, err error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return "", "", &ValueError{Kind: "label", Value: s, Why: "no key", Want: "key=value, e.g. team=storage"}
	}
	if len(k) > MaxLabelKey {
		return "", "", &ValueError{Kind: "label", Value: k[:16] + "...", Why: fmt.Sprintf("a key longer than %d bytes", MaxLabelKey), Want: fmt.Sprintf("a key of at most %d bytes", MaxLabelKey)}
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == '/') {
			return "", "", &ValueError{Kind: "label", Value: k, Why: "a character other than letters, digits, '-', '_', '.' or '/' in the key", Want: "a key such as team or app.kubernetes.io/name"}
		}
	}
	if len(v) > MaxLabelValue {
		return "", "", &ValueError{Kind: "label", Value: k, Why: fmt.Sprintf("a value longer than %d bytes", MaxLabelValue), Want: fmt.Sprintf("a value of at most %d bytes", MaxLabelValue)}
	}
	if !utf8.ValidString(v) {
		return "", "", &ValueError{Kind: "label", Value: k, Why: "a value that is not UTF-8", Want: "printable UTF-8 text"}
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return "", "", &ValueError{Kind: "label", Value: k + "=" + v, Why: "a control character in the value", Want: "printable text"}
		}
	}
	if !termtext.IsClean(v) {
		return "", "", &ValueError{Kind: "label", Value: k, Why: "a bidirectional override in the value (it would reorder what a terminal shows)", Want: "printable text"}
	}
	return k, v, nil
}

// OrDash is s, or "-" for an empty s: a table cell that is never blank.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Millis prints a latency given in ns as milliseconds for a table column,
// without the unit: "0", "0.070", "2.50", "120".
func Millis(ns float64) string {
	if !printable(ns) {
		return "-"
	}
	v := ns / 1e6
	switch {
	case v == 0:
		return "0"
	case v < 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// MB prints bytes per second as MB/s (10^6) with one decimal and without
// the unit, for table columns: "125.0".
func MB(bps float64) string {
	if !printable(bps) {
		return "-"
	}
	return strconv.FormatFloat(bps/1e6, 'f', 1, 64)
}

// Whole prints a figure rounded to an integer, without separators, for
// columns that other programs read: "12346".
func Whole(v float64) string {
	if !printable(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// Published prints a published figure as it is written: whole numbers whole
// (with separators from 1,000), others with one decimal: "3,000", "125",
// "0.5".
func Published(x float64) string {
	if !printable(x) {
		return "-"
	}
	switch {
	case x >= 1000:
		return Commas(int64(x + 0.5))
	case x == float64(int64(x)):
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

// Trim prints x with at most prec decimals and no trailing zeros: "1.5",
// "2".
func Trim(x float64, prec int) string {
	if !printable(x) {
		return "-"
	}
	s := strconv.FormatFloat(x, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// MBps prints bytes per second as a figure in MB/s (10^6): "125 MB/s",
// "12.5 MB/s".
func MBps(bps float64) string { return Figure(bps/1e6) + " MB/s" }

// IOPS prints an IO rate as a figure: "3,000 IOPS", "12.5 IOPS".
func IOPS(v float64) string { return Figure(v) + " IOPS" }

// Span prints a length of time given in seconds for people, rounded to a
// tenth of its unit: "45 s", "12.5 min", "1.5 h"; none when it is 0 or less
// (a budget or a bucket without a limit).
func Span(s float64, none string) string {
	if !printable(s) {
		return "-"
	}
	switch {
	case s <= 0:
		return none
	case s >= 3600:
		return Trim(math.Round(s/360)/10, 2) + " h"
	case s >= 120:
		return Trim(math.Round(s/6)/10, 2) + " min"
	}
	return strconv.FormatFloat(s, 'f', 0, 64) + " s"
}

// PercentileMillis is Millis for a latency percentile, "-" when it is 0:
// fio reported none (percentiles turned off, or no IO of that kind).
func PercentileMillis(ns float64) string {
	if ns == 0 {
		return "-"
	}
	return Millis(ns)
}

// Chart prints a value as chart labels and tooltips show it, short and
// without separators: "0", "0.123", "12.3", "1234".
func Chart(v float64) string {
	if !printable(v) {
		return "-"
	}
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a < 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case a < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// PerSecond prints a rate in its unit: "iops" as IOPS, anything else as
// bytes per second in MB/s.
func PerSecond(v float64, unit string) string {
	if unit == "iops" {
		return IOPS(v)
	}
	return MBps(v)
}

// FormatDuration is FormatSeconds for a time.Duration.
func FormatDuration(d time.Duration) string { return FormatSeconds(d.Seconds()) }

// PlainRate is PerSecond with fixed decimals and no separators, as
// findings quote the rates they compare: "12346 IOPS", "250.3 MB/s".
func PlainRate(v float64, unit string) string {
	if unit == "iops" {
		return Whole(v) + " IOPS"
	}
	return MB(v) + " MB/s"
}

// BytesSI prints a byte count in decimal units, as rates in MB/s read:
// "1.5 GB", "12.3 MB", "512 kB", "100 B".
func BytesSI(b float64) string {
	if !printable(b) {
		return "-"
	}
	switch {
	case b >= 1e9:
		return strconv.FormatFloat(b/1e9, 'f', 1, 64) + " GB"
	case b >= 1e6:
		return strconv.FormatFloat(b/1e6, 'f', 1, 64) + " MB"
	case b >= 1e3:
		return strconv.FormatFloat(b/1e3, 'f', 0, 64) + " kB"
	}
	return strconv.FormatFloat(b, 'f', 0, 64) + " B"
}

// KiB prints a byte count in KiB for a narrow column, as iostat does:
// "4.0k", "0".
func KiB(b float64) string {
	if !printable(b) {
		return "-"
	}
	if b == 0 {
		return "0"
	}
	return strconv.FormatFloat(b/1024, 'f', 1, 64) + "k"
}

// SpanWords prints a length of time in seconds as a whole number and its
// unit in words, for sentences: ("12", "minutes"), ("3", "hours").
func SpanWords(s float64) (n, unit string) {
	if !printable(s) {
		return "-", "seconds"
	}
	switch {
	case s >= 2*3600:
		return strconv.FormatFloat(s/3600, 'f', 0, 64), "hours"
	case s >= 90:
		return strconv.FormatFloat(s/60, 'f', 0, 64), "minutes"
	}
	return strconv.FormatFloat(s, 'f', 0, 64), "seconds"
}

// Ms prints a time given in seconds as milliseconds to sig significant
// digits, whole from a second: "0.5 ms", "12.25 ms", "1500 ms".
func Ms(s float64, sig int) string {
	ms := s * 1e3
	switch {
	case !printable(ms):
		return "-"
	case ms >= 1000:
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	}
	return strconv.FormatFloat(ms, 'g', sig, 64) + " ms"
}

// Share prints a fraction as a percentage with one decimal, and a share too
// small to show as "<0.1%" rather than 0: "12.5%", "<0.1%".
func Share(f float64) string {
	if !printable(f) {
		return "-"
	}
	p := f * 100
	if p > 0 && p < 0.1 {
		return "<0.1%"
	}
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}

// Exact prints a number in the fewest digits that read back as it, without
// exponent: "3000", "0.125".
func Exact(v float64) string {
	if !printable(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// FormatIOPS prints an IO rate cap as FormatRate prints a bandwidth one:
// "3,000 IOPS"; 0 or less is "no cap".
func FormatIOPS(v float64) string {
	if !printable(v) {
		return "-"
	}
	if v <= 0 {
		return "no cap"
	}
	return Commas(int64(math.Round(v))) + " IOPS"
}

// USD prints dollars: cents from $1, four decimals from a cent, two
// significant digits below, so a rate never reads "$0.0000".
func USD(x float64) string {
	if !printable(x) {
		return "-"
	}
	switch {
	case x >= 1000:
		return "$" + Published(x)
	case x >= 1:
		return fmt.Sprintf("$%.2f", x)
	case x >= 0.01:
		return fmt.Sprintf("$%.4f", x)
	case x > 0:
		return fmt.Sprintf("$%.*f", 1-int(math.Floor(math.Log10(x))), x)
	}
	return "$0"
}

// SignedUSD prints a change in dollars with its sign, as USD prints the
// amount: "+$12.00", "-$3.50", "+$0".
func SignedUSD(x float64) string {
	if x < 0 {
		return "-" + USD(-x)
	}
	return "+" + USD(x)
}

// Measure prints a figure in the unit a record names: "iops", "bytes/s"
// (FormatRate) or "ns" (as ms); anything else as a bare number.
func Measure(v float64, unit string) string {
	if !printable(v) {
		return "-"
	}
	switch unit {
	case "iops":
		return Whole(v) + " IOPS"
	case "bytes/s":
		return FormatRate(v)
	case "ns":
		return strconv.FormatFloat(v/1e6, 'f', 2, 64) + " ms"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Dollars prints a price without its sign, for tables that say the
// currency once: cents from $1, two significant digits below ("8.00",
// "0.0027").
func Dollars(v float64) string {
	if !printable(v) {
		return "-"
	}
	if v >= 1 {
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// LatencyBand prints a range of latencies given in ns in one unit: "2-3
// ms", "250-500 µs".
func LatencyBand(lo, hi float64) string {
	// No latency lasts longer than LatencyNsFigure allows: beyond it the
	// band is unknown, never a 16-digit figure.
	if !printable(lo) || !printable(hi) || lo < 0 || hi < 0 || hi > LatencyNsFigure.Max || lo > LatencyNsFigure.Max {
		return "-"
	}
	if hi < 1e6 {
		return Trim(lo/1e3, 2) + "-" + Trim(hi/1e3, 2) + " µs"
	}
	return Trim(lo/1e6, 2) + "-" + Trim(hi/1e6, 2) + " ms"
}

// PlusMinus is how sure a figure v is, from its interval [lo, hi]: the
// wider side as " ±x%" (rounded up to a tenth), "" when there is no
// interval or it is below 0.05%.
func PlusMinus(lo, hi, v float64) string {
	if lo <= 0 || hi <= lo || v <= 0 || !printable(hi) {
		return ""
	}
	e := math.Max(hi-v, v-lo) / v
	if e < 0.0005 {
		return ""
	}
	return " ±" + strconv.FormatFloat(math.Ceil(e*1000)/10, 'f', -1, 64) + "%"
}

// Nouns prints a count with its noun: "1 test", "12 tests", "1,024 runs".
func Nouns(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Commas(n) + " " + many
}

// Ratio prints how many times one figure is another: "81×", "2.5×".
func Ratio(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "-"
	case x >= 10:
		return Commas(int64(math.Round(x))) + "×"
	}
	return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64) + "×"
}

// Stated prints a figure exactly as a catalog states it, with the unit it
// is stated in: "256 GiB", "0.5 KiB", "32767 GiB".
func Stated(v float64, unit string) string {
	if !printable(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + " " + unit
}
