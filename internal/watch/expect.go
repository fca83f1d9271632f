package watch

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/limits"
)

// ExpectError is a mistake in an --expect value, with what to give
// instead.
type ExpectError struct {
	Err  error
	Help string
}

func (e *ExpectError) Error() string { return e.Err.Error() }
func (e *ExpectError) Unwrap() error { return e.Err }

// Hint says what to give instead.
func (e *ExpectError) Hint() string { return e.Help }

// ParseExpect reads what a disk is expected to deliver: its own limits as
// key=value pairs, or a catalog disk (azure:P10, aws:gp3:iops=6000) looked
// up by ExpectFromCatalog. Mistakes are *ExpectError, or the catalog's
// *limits.SpecError.
func ParseExpect(spec, vm string) (*Ceiling, error) {
	if k, _, hasKV := strings.Cut(spec, "="); !hasKV || strings.Contains(k, ":") {
		// provider:disk[:size][:iops=N,...]
		return ExpectFromCatalog(spec, vm)
	}
	c := &Ceiling{Name: "the disk"}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, &ExpectError{Err: fmt.Errorf("--expect: %q is not key=value", kv), Help: "e.g. --expect iops=500,bw=100MB,burst-iops=3500,burst-s=1800"}
		}
		var err error
		var x float64
		switch k {
		case "name":
			c.Name = v
			continue
		case "bw", "burst-bw", "vm-bw":
			x, err = parseRate(v)
		default:
			x, err = strconv.ParseFloat(v, 64)
		}
		if err != nil {
			return nil, &ExpectError{Err: fmt.Errorf("--expect %s: %w", k, err), Help: "numbers for iops, sizes like 100MB for bw"}
		}
		switch k {
		case "iops":
			c.IOPS = x
		case "bw":
			c.BWBytes = x
		case "burst-iops":
			c.BurstIOPS = x
		case "burst-bw":
			c.BurstBWBytes = x
		case "burst-s":
			c.BurstSeconds = x
		case "vm-iops":
			c.VMIOPS = x
		case "vm-bw":
			c.VMBWBytes = x
		default:
			return nil, &ExpectError{Err: fmt.Errorf("--expect: unknown key %q", k), Help: "keys: name, iops, bw, burst-iops, burst-bw, burst-s, vm-iops, vm-bw"}
		}
	}
	if c.IOPS == 0 && c.BWBytes == 0 {
		return nil, &ExpectError{Err: errors.New("--expect needs iops= or bw="), Help: "e.g. --expect iops=500,bw=100MB"}
	}
	return c, nil
}

// parseRate reads a bandwidth: bytes, or a number with a unit that says
// its base, as cloud catalogs do: kB, MB, GB (10^3...) or KiB, MiB, GiB
// (2^10...), with an optional "/s".
func parseRate(s string) (float64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "/s")
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	v, err := strconv.ParseFloat(t[:i], 64)
	if err != nil {
		return 0, fmt.Errorf("invalid rate %q", s)
	}
	mult, ok := map[string]float64{"": 1, "B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9,
		"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[t[i:]]
	if !ok {
		return 0, fmt.Errorf("invalid rate %q: use B, kB, MB, GB (powers of 10) or KiB, MiB, GiB", s)
	}
	return v * mult, nil
}

// ExpectFromCatalog looks a disk (and the VM it is attached to) up in the
// cloud catalog: the disk's sustained limits, its burst allowance when it
// bursts without opting in, and the VM's uncached caps.
func ExpectFromCatalog(spec, vm string) (*Ceiling, error) {
	cat, err := limits.Default()
	if err != nil {
		return nil, err
	}
	x, err := cat.ParseExpectation(spec, vm, nil, "")
	if err != nil {
		return nil, err
	}
	d := x.Disk
	c := &Ceiling{Name: d.Spec, IOPS: d.Read.IOPS, BWBytes: d.Read.BWBytes}
	if b := d.Burst; b != nil && !b.OptIn && b.Seconds > 0 {
		c.BurstIOPS, c.BurstBWBytes, c.BurstSeconds = b.IOPS, b.BWBytes, b.Seconds
	}
	if x.VM != nil {
		c.Name += " on " + x.VM.ID
		r, _ := x.VMRate(false)
		c.VMIOPS, c.VMBWBytes = r.IOPS, r.BWBytes
	}
	return c, nil
}
