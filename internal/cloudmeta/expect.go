package cloudmeta

import (
	"fmt"
	"math"
	"strings"

	"github.com/iolens/iolens/internal/units"
)

// Expect is what the metadata says a target should deliver, in the
// terms of iolens's --expect DISK --vm VM --cache MODE --attached SPECS,
// ready for limits.Catalog.ParseExpectation.
type Expect struct {
	// Disk is the catalog disk spec of the disk the target lives on; ""
	// when the metadata does not give its type and size (Notes say why
	// and what to pass instead).
	Disk string `json:"disk"`
	// VM is the catalog VM id; "" when the catalog does not know the size.
	VM string `json:"vm"`
	// Cache is the Azure host cache mode of that disk; "" elsewhere.
	Cache string `json:"cache"`
	// Attached are the catalog specs of the VM's other data volumes
	// (IBM splits the VSI's volume bandwidth across them).
	Attached []string `json:"attached,omitempty"`
	// From says where it came from, for a report's "expected" line.
	From  string   `json:"from"`
	Notes []string `json:"notes,omitempty"`
}

// ExpectFor returns the expectation for a target on the given kernel
// devices (the device names under the tested directory, partitions,
// device-mapper members and their disks included, as
// diskstats.Resolution.Names gives them), and the metadata disk they
// matched; nil when none did. With no match, Expect still carries the VM
// and a note on why no disk was tied: the target is on a device the
// metadata does not list (a local disk, a network file system), or the
// disk's device could not be found (see each Disk's Notes).
func (i *Info) ExpectFor(devices []string) (Expect, *Disk) {
	x := Expect{VM: i.VM}
	if !i.Detected() {
		return x, nil
	}
	var hits []*Disk
	for _, name := range devices {
		for k := range i.Disks {
			d := &i.Disks[k]
			if d.Device != "" && d.Device == name && !containsDisk(hits, d) {
				hits = append(hits, d)
			}
		}
	}
	src := i.source()
	if len(hits) == 0 {
		x.From = src + ": " + i.VMSize
		switch {
		case len(devices) == 0:
			x.Notes = append(x.Notes, "no device was given for the target, so no disk is tied to it")
		default:
			x.Notes = append(x.Notes, fmt.Sprintf("the target is on %s, which is none of the disks the metadata lists with a known device", strings.Join(devices, ", ")))
		}
		return x, nil
	}
	d := hits[0]
	if len(hits) > 1 {
		var names []string
		for _, h := range hits {
			names = append(names, h.Device)
		}
		x.Notes = append(x.Notes, fmt.Sprintf("the target spans %d disks (%s); the limits are per disk, so the first is taken and the combined ceiling may be higher", len(hits), strings.Join(names, ", ")))
	}
	x.Disk = d.Spec
	if d.Spec == "" {
		x.Notes = append(x.Notes, d.Notes...)
	}
	if i.Provider == azure {
		x.Cache = d.Caching
	}
	if i.Provider == ibm {
		unknown := 0
		for k := range i.Disks {
			o := &i.Disks[k]
			if o == d || o.Role != "data" {
				continue
			}
			if o.Spec == "" {
				unknown++
				continue
			}
			x.Attached = append(x.Attached, o.Spec)
		}
		if unknown > 0 {
			x.Notes = append(x.Notes, fmt.Sprintf("%d other data volume(s) have no catalog spec, so the bandwidth split leaves them out: give --attached", unknown))
		}
	}
	x.From = fmt.Sprintf("%s: %s; %s on %s (%s)", src, i.VMSize, d.Label(), d.Device, d.DeviceHow)
	return x, d
}

func containsDisk(list []*Disk, d *Disk) bool {
	for _, x := range list {
		if x == d {
			return true
		}
	}
	return false
}

// source names the metadata service.
func (i *Info) source() string {
	switch i.Provider {
	case azure:
		return "Azure IMDS"
	case aws:
		return "AWS IMDSv2"
	case gcp:
		return "GCP metadata server"
	case ibm:
		return "IBM VPC metadata service"
	}
	return "no cloud metadata"
}

// Summary is one line for a report header: the provider, the VM size
// and where it runs.
func (i *Info) Summary() string {
	if !i.Detected() {
		return "no cloud metadata service answered"
	}
	s := i.Provider + " " + i.VMSize
	if i.VM == "" {
		s += " (not in the catalog)"
	}
	switch {
	case i.Region != "" && i.Zone != "" && !strings.HasPrefix(i.Zone, i.Region):
		s += " in " + i.Region + " zone " + i.Zone
	case i.Zone != "":
		s += " in " + i.Zone
	case i.Region != "":
		s += " in " + i.Region
	}
	return fmt.Sprintf("%s, %d disk(s), from the %s", s, len(i.Disks), i.source())
}

// Label names a disk for a person: its role, LUN or name, type and size.
func (d *Disk) Label() string {
	s := d.Role + " disk"
	switch {
	case d.LUN != nil:
		s += fmt.Sprintf(" LUN %d", *d.LUN)
	case d.ID != "" && !strings.Contains(d.ID, "/"):
		s += " " + d.ID
	case d.Name != "":
		s += " " + d.Name
	}
	var attrs []string
	if d.Spec != "" {
		attrs = append(attrs, d.Spec)
	} else if d.Type != "" {
		attrs = append(attrs, d.Type)
	}
	if d.SizeBytes > 0 {
		attrs = append(attrs, units.Exact(math.Round(float64(d.SizeBytes)/(1<<30)*100)/100)+" GiB")
	}
	if d.Caching != "" {
		attrs = append(attrs, "caching "+d.Caching)
	}
	if len(attrs) > 0 {
		s += " (" + strings.Join(attrs, ", ") + ")"
	}
	return s
}
