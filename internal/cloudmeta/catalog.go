package cloudmeta

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/units"
)

// setVM records the VM size and its catalog id, or a note when the
// catalog does not have it.
func setVM(c *limits.Catalog, info *Info, size, source string) {
	info.VMSize = size
	info.Facts = append(info.Facts, Fact{Key: "vm_size", Value: size, Source: source})
	if v := c.VM(info.Provider + ":" + size); v != nil && v.Provider == info.Provider {
		info.VM = v.ID
		return
	}
	info.Notes = append(info.Notes, fmt.Sprintf("%s is not in the limits catalog: iolens knows no VM limits for it (%s sizes it has: iolens catalog list)", size, info.Provider))
}

// setLocation records the region and zone when they are plain names.
// With no region of its own (GCP, IBM), the region is the zone without
// its last part ("us-south-1" is in "us-south").
func setLocation(info *Info, region, regionSrc, zone, zoneSrc string) {
	if z, ok := name(zone, maxNameLen); ok {
		info.Zone = z
		info.Facts = append(info.Facts, Fact{Key: "zone", Value: z, Source: zoneSrc})
		if i := strings.LastIndexByte(z, '-'); regionSrc == "" && i > 0 {
			region, regionSrc = z[:i], zoneSrc+" (the zone without its last part)"
		}
	}
	if r, ok := name(region, maxNameLen); ok && regionSrc != "" {
		info.Region = r
		info.Facts = append(info.Facts, Fact{Key: "region", Value: r, Source: regionSrc})
	}
}

// diskSpec asks the catalog for family at sizeGiB with the provisioned
// figures given (0: not known) and returns the canonical spec it
// accepts ("azure:P20"). When the catalog cannot take it, spec is "" and
// why says what is missing, with the spec a user could give instead.
func diskSpec(c *limits.Catalog, provider, family string, sizeGiB int64, iops, bwBytes float64) (spec string, notes []string, why string) {
	f := c.Family(provider, family)
	if f == nil || f.Kind != "disk" {
		return "", nil, fmt.Sprintf("the limits catalog has no %s disk type %q", provider, family)
	}
	e := f.Editions[0]
	if sizeGiB <= 0 {
		return "", nil, fmt.Sprintf("its size is not known; give --expect %s:SIZE", f.ID)
	}
	s := f.ID + ":" + strconv.FormatInt(sizeGiB, 10) + "GiB"
	var kv, missing []string
	if e.IOPS != nil && e.IOPS.Provisioned {
		if iops > 0 {
			kv = append(kv, "iops="+units.Exact(iops))
		} else {
			missing = append(missing, "iops=N")
		}
	}
	if e.Tput != nil && e.Tput.Provisioned {
		if bwBytes > 0 {
			unit := 1e6
			if e.Unit == "MiB/s" {
				unit = 1 << 20
			}
			kv = append(kv, "throughput="+units.Exact(math.Round(bwBytes/unit*1000)/1000))
		} else {
			missing = append(missing, "throughput=M")
		}
	}
	if len(missing) > 0 {
		return "", nil, fmt.Sprintf("its provisioned %s is not in the metadata; give --expect %s:%s", strings.Join(missing, " and "), s, strings.Join(append(kv, missing...), ","))
	}
	if len(kv) > 0 {
		s += ":" + strings.Join(kv, ",")
	}
	d, err := c.ParseDisk(s)
	if err != nil {
		return "", nil, "the limits catalog refuses " + s + ": " + err.Error()
	}
	return d.Spec, d.Notes, ""
}

// gibCeil is a byte size in whole GiB, rounded up as providers allocate.
func gibCeil(b int64) int64 { return (b + 1<<30 - 1) >> 30 }
