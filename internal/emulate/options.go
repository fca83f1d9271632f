package emulate

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/units"
	"golang.org/x/sys/unix"
)

// SpecOptions are what 'iolens emulate create' is given: a profile and
// the values that override it, as written on the command line. Set says
// which were given (by flag name: "iops", "read-bw"...); only those
// override the profile.
type SpecOptions struct {
	Size, FS                   string
	IOPS, ReadIOPS, WriteIOPS  float64
	BW, ReadBW, WriteBW        string
	BurstIOPS                  float64
	BurstBW                    string
	BurstSeconds, BurstCredits float64
	StartEmpty                 bool
	Profile                    string
	Cache, CacheSize, CacheBW  string
	CacheIOPS                  float64
	Scale                      float64
	Cgroup                     string
	Latency, ReadLatency       string
	WriteLatency, FlushLatency string
	RAM                        bool
	// TotalIOPS and TotalBW cap reads and writes together; ThrottleAt is
	// "cgroup" or "device"; Channels is how many IOs the device serves
	// at once (0: no limit).
	TotalIOPS  float64
	TotalBW    string
	ThrottleAt string
	Channels   units.Count
	// ReadErrors is a region of the device whose reads fail ("64MiB-1GiB");
	// DownEvery and DownFor a device that fails all IO for a while now
	// and then; ColdRead and ColdBlock blocks slow on their first read.
	ReadErrors         string
	DownEvery, DownFor string
	ColdRead           string
	ColdBlock          string
	// QueueGrowth and ServerCPU are Spec's: a device that slows as its
	// queue grows, and CPU the latency layer spends on each IO.
	QueueGrowth float64
	ServerCPU   string
	Set         func(name string) bool
}

// optionErr is a mistake in the options: a *hint.UsageError.
func optionErr(format string, args ...any) error {
	return hint.Usage(fmt.Errorf(format, args...), "see 'iolens emulate create --help'")
}

// Spec builds the spec of disk name in stateDir: the profile's, then
// the options given over it. Mistakes in the options are *hint.UsageError.
func (o SpecOptions) Spec(name, stateDir string) (Spec, error) {
	s := Spec{Name: name, Dir: stateDir, FS: o.FS, Scale: o.Scale, Cache: CacheMode(o.Cache), RAM: o.RAM,
		Channels: int(o.Channels.N)}
	switch o.ThrottleAt {
	case "", string(ThrottleCgroup), string(ThrottleDevice):
		s.ThrottleAt = ThrottleAt(o.ThrottleAt)
	default:
		return s, optionErr("--throttle-at %q: cgroup (the kernel's throttle, above the device) or device (inside it, as a cloud hypervisor's)", o.ThrottleAt)
	}
	if o.Profile != "" {
		p, err := LookupProfile(o.Profile)
		if err != nil {
			return s, hint.Usage(err, "see 'iolens emulate profiles'")
		}
		p.Apply(&s)
		if s.ThrottleAt == ThrottleDevice {
			// A cloud disk's caps count reads and writes together; inside
			// the device they can.
			l := &s.Limits
			l.TotalIOPS, l.TotalBPS = l.ReadIOPS, l.ReadBPS
			l.ReadIOPS, l.WriteIOPS, l.ReadBPS, l.WriteBPS = 0, 0, 0, 0
		}
	}
	size, err := units.ParseSize(o.Size)
	if err != nil {
		return s, optionErr("--size: %v", err)
	}
	s.SizeBytes = size
	rate := func(flag, v string, dst ...*float64) error {
		if !o.Set(flag) {
			return nil
		}
		r, err := units.ParseRate(v)
		if err != nil {
			return optionErr("--%s: %v", flag, err)
		}
		for _, d := range dst {
			*d = r
		}
		return nil
	}
	num := func(flag string, v float64, dst ...*float64) {
		if o.Set(flag) {
			for _, d := range dst {
				*d = v
			}
		}
	}
	s.QueueGrowth = o.QueueGrowth
	if o.Set("server-cpu") {
		d, err := units.ParseDuration(o.ServerCPU)
		if err != nil {
			return s, optionErr("--server-cpu: %v", err)
		}
		s.ServerCPU = d
	}
	l := &s.Limits
	num("iops", o.IOPS, &l.ReadIOPS, &l.WriteIOPS)
	num("read-iops", o.ReadIOPS, &l.ReadIOPS)
	num("write-iops", o.WriteIOPS, &l.WriteIOPS)
	num("total-iops", o.TotalIOPS, &l.TotalIOPS)
	num("burst-iops", o.BurstIOPS, &s.BurstIOPS)
	num("burst-seconds", o.BurstSeconds, &s.BurstSeconds)
	if o.Set("burst-credits") {
		s.BucketIOs = o.BurstCredits
	}
	s.StartEmpty = o.StartEmpty
	for _, r := range []struct {
		flag, v string
		dst     []*float64
	}{{"bw", o.BW, []*float64{&l.ReadBPS, &l.WriteBPS}}, {"read-bw", o.ReadBW, []*float64{&l.ReadBPS}},
		{"write-bw", o.WriteBW, []*float64{&l.WriteBPS}}, {"burst-bw", o.BurstBW, []*float64{&s.BurstBPS}},
		{"total-bw", o.TotalBW, []*float64{&l.TotalBPS}}} {
		if err := rate(r.flag, r.v, r.dst...); err != nil {
			return s, err
		}
	}
	if s.Cache != CacheNone {
		s.CacheIOPS = o.CacheIOPS
		if s.CacheBPS, err = units.ParseRate(o.CacheBW); err != nil {
			return s, optionErr("--cache-bw: %v", err)
		}
	}
	if s.Cache == CacheReadWrite {
		cs, err := units.ParseSize(o.CacheSize)
		if err != nil {
			return s, optionErr("--cache-size: %v", err)
		}
		s.CacheBytes = float64(cs)
	}
	if o.Scale <= 0 {
		return s, optionErr("--scale must be above 0")
	}
	if err := o.latencies(&s); err != nil {
		return s, err
	}
	if err := o.media(&s); err != nil {
		return s, err
	}
	switch o.Cgroup {
	case "auto":
	case "v1", "v2":
		s.Cgroup = CgroupMode(o.Cgroup)
	default:
		return s, optionErr("--cgroup: auto, v1 or v2")
	}
	return s, nil
}

// latencies sets the spec's latency layer from the flags, over any
// latency the profile carries.
func (o SpecOptions) latencies(s *Spec) error {
	var l Latency
	if s.Latency != nil {
		l = *s.Latency
	}
	set := false
	for _, x := range []struct {
		flag, v string
		dst     []*Dist
	}{{"latency", o.Latency, []*Dist{&l.Read, &l.Write, &l.Flush}}, {"read-latency", o.ReadLatency, []*Dist{&l.Read}},
		{"write-latency", o.WriteLatency, []*Dist{&l.Write}}, {"flush-latency", o.FlushLatency, []*Dist{&l.Flush}}} {
		if !o.Set(x.flag) {
			continue
		}
		d, err := ParseDist(x.v)
		if err != nil {
			return hint.Usage(fmt.Errorf("--%s: %w", x.flag, err), "e.g. --"+x.flag+" 2ms, 2ms±0.5ms, 2ms+-0.5ms, p50=1ms,p99=4ms or hit=0.2ms,miss=8ms,hitratio=0.7")
		}
		for _, p := range x.dst {
			*p = d
		}
		set = true
	}
	if set || s.Latency != nil {
		s.Latency = &l
	}
	return nil
}

// media sets the spec's faults and cold blocks from the flags.
func (o SpecOptions) media(s *Spec) error {
	var f Faults
	if o.Set("read-errors") {
		a, b, ok := strings.Cut(o.ReadErrors, "-")
		from, err1 := units.ParseSize(strings.TrimSpace(a))
		to, err2 := units.ParseSize(strings.TrimSpace(b))
		if !ok || err1 != nil || err2 != nil {
			return hint.Usage(fmt.Errorf("--read-errors %q: want FROM-TO, two sizes", o.ReadErrors), "e.g. --read-errors 64MiB-1GiB: reads of the device's bytes from 64 MiB to 1 GiB fail")
		}
		f.ReadErrorFrom, f.ReadErrorTo = from, to
	}
	for _, x := range []struct {
		flag, v string
		dst     *time.Duration
	}{{"down-every", o.DownEvery, &f.DownEvery}, {"down-for", o.DownFor, &f.DownFor}} {
		if !o.Set(x.flag) {
			continue
		}
		d, err := units.ParseDuration(x.v)
		if err != nil {
			return optionErr("--%s: %v", x.flag, err)
		}
		*x.dst = d
	}
	if f != (Faults{}) {
		s.Faults = &f
	}
	if o.Set("cold-read") {
		d, err := units.ParseDuration(o.ColdRead)
		if err != nil {
			return optionErr("--cold-read: %v", err)
		}
		c := &Cold{Latency: d, BlockBytes: 64 << 10}
		if o.Set("cold-block") {
			if c.BlockBytes, err = units.ParseSize(o.ColdBlock); err != nil {
				return optionErr("--cold-block: %v", err)
			}
		}
		s.Cold = c
	} else if o.Set("cold-block") {
		return optionErr("--cold-block needs --cold-read")
	}
	return nil
}

// RunTarget resolves a run on emulated disk name: the directory to test
// (the disk's mount unless dir is inside it), the prefix that puts fio in
// the disk's cgroup, and a note saying which disk it is and how it
// behaves ("" when the disk could not be used). A dir off the disk is an
// *hint.UsageError. The directory must be writable by this user: tests write
// there and fio joins the disk's cgroup, both root's as the disk is.
func RunTarget(name, dir string) (string, []string, string, error) {
	d, st, err := OpenUsable(DefaultDir(), name)
	if err != nil {
		return "", nil, "", err
	}
	note := fmt.Sprintf("on emulated disk %s", name)
	if d.Spec.Profile != "" {
		note += " (" + d.Spec.Profile + ")"
	}
	if st.Controller == "stopped" {
		note += "; its controller is NOT running: caps stay as last set, no bursting or cache changes"
	}
	if sc := d.Spec.Scale; sc > 0 && sc != 1 {
		note += fmt.Sprintf("; TIME SCALED x%g: bursts, cache fills and drains last 1/%g as long", sc, sc)
	}
	abs := d.Mount
	if dir != "" {
		if abs, err = filepath.Abs(dir); err != nil {
			return "", nil, note, err
		}
		if abs != d.Mount && !strings.HasPrefix(abs, d.Mount+"/") {
			return "", nil, note, hint.Usage(fmt.Errorf("%s is not on emulated disk %q (mounted at %s)", dir, name, d.Mount), "see 'iolens run --help'")
		}
	}
	if unix.Access(abs, unix.W_OK) != nil {
		return "", nil, note, &hint.Error{Err: fmt.Errorf("emulated disk %s is root's: %s is not writable by this user", name, abs),
			Advice: "run it as root, as the disk was made: sudo iolens ... --emulated " + name}
	}
	return abs, d.CommandPrefix(), note, nil
}
