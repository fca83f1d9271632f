package units

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSize reads a byte size the way fio and Kubernetes users write it:
// "4k", "1M", "22m", "1GiB", "300Gi", "2300". Suffixes are binary (1024),
// as fio's default kb_base is.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size")
	}
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("invalid size %q: want a number with an optional k, M, G or T suffix", s)
	}
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "b"), "i")
	mult := map[string]float64{"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("invalid size %q: unknown unit %q (use k, M, G or T)", s, t[i:])
	}
	return int64(v * mult), nil
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

// HumanBytes prints a byte count rounded, in binary units, for people.
func HumanBytes(n float64) string {
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
