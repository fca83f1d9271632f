package emulate

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Profile is a cloud disk's published limits, enough to emulate it.
// Figures come from ../shared/reference/cloud-limits.yaml (provider docs);
// Source names the catalog entry.
type Profile struct {
	Name   string
	Source string
	// SizeGiB is the provisioned size the limits belong to.
	SizeGiB float64
	// IOPS and BPS are the baseline caps, for reads and writes together.
	IOPS, BPS float64
	// BurstIOPS / BurstBPS and the bucket (seconds at the burst rate, or
	// IO credits) describe credit bursting; 0 when there is none.
	BurstIOPS, BurstBPS float64
	BurstSeconds        float64
	BucketIOs           float64
	Note                string
}

const (
	mb  = 1e6
	mib = 1 << 20
)

// profiles is a small table of the figures the issue asks for; the full
// catalog is the limits package's job.
var profiles = map[string]Profile{
	"azure:P4": {Name: "azure:P4", Source: "azure.disk.premium_ssd.P4", SizeGiB: 32, IOPS: 120, BPS: 25 * mb,
		BurstIOPS: 3500, BurstBPS: 170 * mb, BurstSeconds: 1800,
		Note: "credit bursting, bucket starts full (30 min at burst); MB/s = 10^6 B/s"},
	"azure:P15": {Name: "azure:P15", Source: "azure.disk.premium_ssd.P15", SizeGiB: 256, IOPS: 1100, BPS: 125 * mb,
		BurstIOPS: 3500, BurstBPS: 170 * mb, BurstSeconds: 1800,
		Note: "credit bursting, bucket starts full (30 min at burst); MB/s = 10^6 B/s"},
	"azure:E10": {Name: "azure:E10", Source: "azure.disk.standard_ssd.E10", SizeGiB: 128, IOPS: 500, BPS: 60 * mb,
		BurstIOPS: 600, BurstBPS: 150 * mb, BurstSeconds: 1800,
		Note: "limits are 'up to', not guaranteed; credit bursting, 30 min at burst; MB/s = 10^6 B/s"},
	"aws:gp3": {Name: "aws:gp3", Source: "aws.formula.ebs.gp3.2025", SizeGiB: 0, IOPS: 3000, BPS: 125 * mib,
		Note: "baseline gp3 (3,000 IOPS, 125 MiB/s), no bursting"},
}

// ProfileNames lists the profiles, including the sized forms.
func ProfileNames() []string {
	var out []string
	for k := range profiles {
		out = append(out, k)
	}
	out = append(out, "aws:gp2:SIZE (e.g. aws:gp2:100GiB)", "ibm:10iops-tier:SIZE (e.g. ibm:10iops-tier:300GiB)")
	sort.Strings(out)
	return out
}

// LookupProfile resolves a profile name such as "azure:P4",
// "aws:gp2:100GiB" or "ibm:10iops-tier:300GiB".
func LookupProfile(name string) (Profile, error) {
	if p, ok := profiles[name]; ok {
		return p, nil
	}
	parts := strings.Split(name, ":")
	if len(parts) == 3 {
		gib, err := parseGiB(parts[2])
		if err != nil {
			return Profile{}, fmt.Errorf("profile %q: %w", name, err)
		}
		switch parts[0] + ":" + parts[1] {
		case "aws:gp2":
			return gp2(gib), nil
		case "ibm:10iops-tier":
			return ibm10(gib), nil
		}
	}
	return Profile{}, fmt.Errorf("unknown profile %q; known: %s", name, strings.Join(ProfileNames(), ", "))
}

func parseGiB(s string) (float64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(s, "GiB"), "GB")
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 || t == s {
		return 0, fmt.Errorf("size %q: want e.g. 100GiB", s)
	}
	return v, nil
}

// gp2: baseline 3 IOPS/GiB (100 to 16,000); below 1,000 GiB bursts to
// 3,000 IOPS on a 5.4 million credit bucket that starts full; throughput
// 128 MiB/s up to 170 GiB, 250 MiB/s from 334 GiB (between the two, 250
// needs burst credits; emulated as 250).
func gp2(gib float64) Profile {
	p := Profile{Name: fmt.Sprintf("aws:gp2:%gGiB", gib), Source: "aws.formula.ebs.gp2", SizeGiB: gib,
		IOPS: math.Min(16000, math.Max(100, 3*gib)), BPS: 250 * mib,
		Note: "IO credits 5.4 million, start full, earned at the baseline rate; MiB/s = 2^20 B/s"}
	if gib <= 170 {
		p.BPS = 128 * mib
	}
	if p.IOPS < 3000 {
		p.BurstIOPS, p.BucketIOs = 3000, 5.4e6
	}
	return p
}

// ibm10: 10 IOPS/GB between 3,000 and 48,000; throughput IOPS x 256 KiB up
// to 1,024 MB/s.
func ibm10(gb float64) Profile {
	iops := math.Min(48000, math.Max(3000, 10*gb))
	return Profile{Name: fmt.Sprintf("ibm:10iops-tier:%gGiB", gb), Source: "ibm.formula.vpc_block.10iops-tier", SizeGiB: gb,
		IOPS: iops, BPS: math.Min(1024*mb, iops*256*1024),
		Note: "no bursting; IOPS defined at 16 KiB IOs"}
}

// Apply copies the profile's limits into spec.
func (p Profile) Apply(s *Spec) {
	s.Limits = Limits{ReadIOPS: p.IOPS, WriteIOPS: p.IOPS, ReadBPS: p.BPS, WriteBPS: p.BPS}
	s.BurstIOPS, s.BurstBPS, s.BurstSeconds, s.BucketIOs = p.BurstIOPS, p.BurstBPS, p.BurstSeconds, p.BucketIOs
	s.Profile = p.Name
}
