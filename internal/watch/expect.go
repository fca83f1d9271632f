package watch

import (
	"errors"
	"fmt"
	"strings"

	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/units"
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
			x, err = units.ParseRate(v)
		case "burst-s":
			x, err = units.ParseNumber(v, 0, maxBurstSeconds)
		default:
			x, err = units.ParseNumber(v, 0, maxIOPS)
		}
		if err != nil {
			return nil, &ExpectError{Err: fmt.Errorf("--expect %s: %w", k, err), Help: "numbers for iops and burst-s, rates like 100MB or 128MiB/s for bw"}
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

// Bounds of --expect's numbers: no disk or VM comes near a billion IOPS,
// and no burst bucket lasts a year.
const (
	maxIOPS         = 1e9
	maxBurstSeconds = 365 * 24 * 3600
)

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
