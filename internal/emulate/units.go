package emulate

import (
	"fmt"
)

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
