package limits

import (
	"fmt"
	"slices"
	"strings"

	"github.com/iolens/iolens/internal/units"
)

// SeriesName is the VM's machine series as attach rules name it: its
// series field, else for GCP the first word of its name (n2 of
// n2-standard-4); "" when unknown.
func (v *VM) SeriesName() string {
	if v.Series != "" {
		return strings.ToLower(v.Series)
	}
	if v.Provider == "gcp" {
		_, name, _ := strings.Cut(v.ID, ":")
		s, _, _ := strings.Cut(name, "-")
		return strings.ToLower(s)
	}
	return ""
}

// Attachable reports whether the provider lets the family be used with
// the VM size, and why not when it does not. A family with no rule is
// attachable everywhere.
func (f *Family) Attachable(v *VM) (bool, string) {
	a := f.Attach
	if a == nil || v == nil {
		return true, ""
	}
	s := v.SeriesName()
	if !slices.Contains(a.Series, s) {
		return false, fmt.Sprintf("%s cannot use %s: %s", v.ID, f.ID, a.Basis)
	}
	if n := a.MinVCPU[s]; v.VCPU < n {
		return false, fmt.Sprintf("%s cannot use %s: %s needs %d or more vCPUs (%s has %d); %s", v.ID, f.ID, strings.ToUpper(s), n, v.ID, v.VCPU, a.Basis)
	}
	return true, ""
}

// VMGap says what the catalog lacks to judge the disk on the VM: "" when
// it holds the VM's figure for this kind of disk (or there is no VM). An
// option with a gap is never listed as sustained: nothing says the VM
// carries it.
func (x *Expectation) VMGap() string {
	v := x.VM
	if v == nil {
		return ""
	}
	if x.Disk.Family.Kind == "file" {
		if x.NetworkBWBytes > 0 {
			return ""
		}
		why := "the catalog lacks " + v.ID + "'s network bandwidth"
		if v.NetworkBurstMbps > 0 {
			why = fmt.Sprintf("the catalog lacks %s's sustained network bandwidth (its sources give only 'up to' %s Mbps, %s MB/s, on network credits)", v.ID, units.Published(v.NetworkBurstMbps), units.MB(v.NetworkBurstMbps*1e6/8))
		} else if v.NetworkNote != "" {
			why += " (" + v.NetworkNote + ")"
		}
		return why
	}
	if v.BandwidthMbps > 0 || v.Uncached != nil {
		return ""
	}
	if t := x.Disk.Edition.VMType; t != "" {
		if _, ok := v.PerType[t]; ok {
			return ""
		}
	}
	return "the catalog lacks " + v.ID + "'s limits for " + x.Disk.Family.Name
}
