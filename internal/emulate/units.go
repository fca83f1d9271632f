package emulate

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseRate reads a bandwidth: a number with a unit that says its base,
// "25MB/s" or "25MB" (10^6 B/s), "128MiB/s" (2^20), "500KiB", "1GB", or a
// bare number of bytes per second. "25M" is refused: the catalog mixes
// both bases, so the unit must say which.
func ParseRate(s string) (float64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "/s")
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	v, err := strconv.ParseFloat(t[:i], 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bandwidth %q: want a number and a unit, e.g. 25MB/s or 128MiB/s", s)
	}
	mult, ok := map[string]float64{"": 1, "B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9,
		"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[strings.TrimSpace(t[i:])]
	if !ok {
		return 0, fmt.Errorf("bandwidth %q: unit must be B, KB, MB, GB (10^3 steps) or KiB, MiB, GiB (2^10 steps)", s)
	}
	return v * mult, nil
}

// FormatRate prints bytes per second in MB/s (10^6) and, when it is a
// round figure there, in MiB/s.
func FormatRate(bps float64) string {
	if bps <= 0 {
		return "no cap"
	}
	if m := bps / (1 << 20); m == float64(int64(m)) {
		return fmt.Sprintf("%g MiB/s", m)
	}
	return fmt.Sprintf("%.4g MB/s", bps/1e6)
}

// FormatIOPS prints an IOPS cap.
func FormatIOPS(v float64) string {
	if v <= 0 {
		return "no cap"
	}
	return fmt.Sprintf("%.0f IOPS", v)
}

// FormatBytes prints a size in binary units.
func FormatBytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	u := 0
	for u < len(units)-1 && n >= 1024 {
		n /= 1024
		u++
	}
	return fmt.Sprintf("%.4g %s", n, units[u])
}
