package emulate

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEventLogRoundTrip(t *testing.T) {
	dir := t.TempDir()
	l, err := openEventLog(filepath.Join(dir, "e.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	c, d := 0.0, 3.5e6
	in := []Event{
		{Time: t0, Event: EventStart, ReadIOPS: 3500, WriteIOPS: 3500, Scale: 60},
		{Time: t0.Add(30 * time.Second), Event: EventBurstEnd, ElapsedS: 30, ReadIOPS: 120, WriteIOPS: 120, Resource: ResourceIOPS, Credits: &c},
		{Time: t0.Add(31 * time.Second), Event: EventStallStart, ElapsedS: 31, ReadIOPS: 1, WriteIOPS: 1, WriteBPS: 128e6, DirtyBytes: &d},
	}
	for _, e := range in {
		if err := l.write(e); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	b, _ := os.ReadFile(filepath.Join(dir, "e.ndjson"))
	// The wire format others parse: RFC 3339 time with nanoseconds, and
	// credits present even when 0.
	first := strings.SplitN(string(b), "\n", 2)[0]
	if !strings.Contains(first, `"time":"2026-11-22T10:00:00.123456789Z"`) || !strings.Contains(first, `"event":"start"`) {
		t.Errorf("first line %s", first)
	}
	if !strings.Contains(string(b), `"credits":0`) {
		t.Errorf("credits 0 dropped: %s", b)
	}
	out, err := ReadEvents(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || !out[0].Time.Equal(t0) || out[1].Event != EventBurstEnd || *out[1].Credits != 0 || *out[2].DirtyBytes != d || out[2].WriteBPS != 128e6 {
		t.Errorf("read back %+v", out)
	}
	if got := out[2].Limits(); got != (Limits{ReadIOPS: 1, WriteIOPS: 1, WriteBPS: 128e6}) {
		t.Errorf("Limits() %+v", got)
	}
}

func TestReadEventsTornLastLine(t *testing.T) {
	log := `{"time":"2026-01-01T00:00:00Z","event":"start"}
{"time":"2026-01-01T00:00:01Z","event":"burst-end","resource":"iops","credits":0}
{"time":"2026-01-01T00:00:02Z","eve`
	evs, err := ReadEvents(strings.NewReader(log))
	if err != nil || len(evs) != 2 || evs[1].Event != EventBurstEnd {
		t.Errorf("torn tail: %v %+v", err, evs)
	}
	bad := "{\"event\":\"start\"}\nnot json\n{\"event\":\"stop\"}\n"
	if _, err := ReadEvents(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad middle line: %v", err)
	}
}

func TestProfiles(t *testing.T) {
	for _, c := range []struct {
		name                string
		iops, bps           float64
		burstIOPS, burstBPS float64
		// burstS is how long a full IOPS bucket lasts at the burst rate.
		burstS float64
	}{
		// Figures from cloud-limits.yaml, by hand.
		{"azure:P4", 120, 25e6, 3500, 170e6, 1800},
		{"azure:P15", 1100, 125e6, 3500, 170e6, 1800},
		{"azure:E10", 500, 60e6, 600, 150e6, 1800},
		{"aws:gp2:100GiB", 300, 128 << 20, 3000, 0, 2000},        // 5.4M credits / 2,700
		{"aws:gp2:10GiB", 100, 128 << 20, 3000, 0, 5.4e6 / 2900}, // the 100 IOPS floor
		{"aws:gp2:2000GiB", 6000, 250 << 20, 0, 0, 0},
		{"aws:gp3", 3000, 125 << 20, 0, 0, 0},
		{"ibm:10iops-tier:300GB", 3000, 3000 * 256 * 1024, 0, 0, 0},
		{"ibm:10iops-tier:4800GB", 48000, 1024e6, 0, 0, 0},
		{"azure:P30", 5000, 200e6, 0, 0, 0}, // P30 and up do not credit-burst
	} {
		p, err := LookupProfile(c.name)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if p.IOPS != c.iops || p.BPS != c.bps || p.BurstIOPS != c.burstIOPS || p.BurstBPS != c.burstBPS {
			t.Errorf("%s: %+v", c.name, p)
		}
		s := Spec{Name: "x"}
		p.Apply(&s)
		if err := s.withDefaults().Validate(); err != nil {
			t.Errorf("%s: spec does not validate: %v", c.name, err)
		}
		if got := NewModel(s.withDefaults(), time.Time{}).BurstSeconds(ResourceIOPS); math.Abs(got-c.burstS) > 1e-6 {
			t.Errorf("%s: burst lasts %v s, want %v", c.name, got, c.burstS)
		}
	}
	// Latency only where the provider publishes a typical figure.
	hdt, err := LookupProfile("gcp:hyperdisk-throughput:2TiB")
	if err != nil || hdt.Latency == nil || hdt.Latency.Read != Fixed(10*time.Millisecond) || !hdt.Latency.Write.Zero() || !strings.Contains(hdt.LatencyNote, "gcp-hdt") {
		t.Errorf("hyperdisk-throughput latency: %+v %q %v", hdt.Latency, hdt.LatencyNote, err)
	}
	s := Spec{Name: "x"}
	hdt.Apply(&s)
	if s.Latency == nil || s.Latency.Read.Median != 10*time.Millisecond {
		t.Errorf("Apply did not carry the latency: %+v", s.Latency)
	}
	for _, name := range []string{"azure:P4", "aws:gp3", "azure:S4", "aws:io2-bx:100GiB:iops=1000"} {
		p, err := LookupProfile(name)
		if err == nil && (p.Latency != nil || p.LatencyNote == "") {
			t.Errorf("%s: latency %+v, note %q: none is published", name, p.Latency, p.LatencyNote)
		}
	}
	for _, bad := range []string{"azure:P99", "aws:gp2", "aws:gp2:big", "aws:gp2:-5GiB", "gcp:pd"} {
		if _, err := LookupProfile(bad); err == nil {
			t.Errorf("LookupProfile(%q) accepted", bad)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := Spec{Name: "db-1", Limits: Limits{ReadIOPS: 100, WriteIOPS: 100, WriteBPS: 1e6}}
	if err := ok.withDefaults().Validate(); err != nil {
		t.Fatal(err)
	}
	for what, s := range map[string]Spec{
		"device throttle":          {Name: "d", ThrottleAt: ThrottleDevice, Limits: Limits{TotalIOPS: 2500, TotalBPS: 125e6, ReadIOPS: 2000}},
		"readonly cache at device": {Name: "d", ThrottleAt: ThrottleDevice, Cache: CacheReadOnly, Limits: Limits{TotalIOPS: 500}},
		"channels":                 {Name: "d", Channels: 4, Latency: &Latency{Read: Fixed(2 * ms)}},
		"bimodal":                  {Name: "d", Latency: &Latency{Flush: Dist{Hit: ms, Miss: 9 * ms, HitRatio: 0.9}}},
		"ram alone":                {Name: "d", RAM: true},
	} {
		if err := s.withDefaults().Validate(); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	// The device throttle brings the layer along.
	if s := (Spec{Name: "d", ThrottleAt: ThrottleDevice}).withDefaults(); s.Latency == nil {
		t.Error("a device throttle without the latency layer")
	}
	for what, mod := range map[string]func(*Spec){
		"bad name":             func(s *Spec) { s.Name = "../etc" },
		"upper name":           func(s *Spec) { s.Name = "Disk" },
		"fs":                   func(s *Spec) { s.FS = "btrfs" },
		"small":                func(s *Spec) { s.SizeBytes = 1 << 20 },
		"negative":             func(s *Spec) { s.Limits.ReadBPS = -1 },
		"burst below baseline": func(s *Spec) { s.BurstIOPS, s.BurstSeconds = 50, 10 },
		"burst no bucket":      func(s *Spec) { s.BurstIOPS = 500 },
		"burst split caps":     func(s *Spec) { s.Limits.WriteIOPS, s.BurstIOPS, s.BurstSeconds = 200, 500, 10 },
		"bw burst no base":     func(s *Spec) { s.BurstBPS, s.BurstSeconds = 1e6, 10 },
		"cache mode":           func(s *Spec) { s.Cache = "writeback" },
		"rw cache no drain":    func(s *Spec) { s.Cache, s.Limits = CacheReadWrite, Limits{} },
		"cgroup":               func(s *Spec) { s.Cgroup = "v3" },
		"throttle at":          func(s *Spec) { s.ThrottleAt = "hypervisor" },
		"total at cgroup":      func(s *Spec) { s.Limits.TotalIOPS = 500 },
		"total bw at cgroup":   func(s *Spec) { s.Limits.TotalBPS = 1e6 },
		"total NaN":            func(s *Spec) { s.ThrottleAt, s.Limits.TotalIOPS = ThrottleDevice, math.NaN() },
		"burst at device": func(s *Spec) {
			s.ThrottleAt, s.BurstIOPS, s.BurstSeconds, s.Limits.WriteIOPS = ThrottleDevice, 500, 10, 100
		},
		"rw cache at device":   func(s *Spec) { s.ThrottleAt, s.Cache = ThrottleDevice, CacheReadWrite },
		"channels no latency":  func(s *Spec) { s.Channels = 4 },
		"channels zero lat":    func(s *Spec) { s.Channels, s.Latency = 4, &Latency{Flush: Fixed(ms)} },
		"channels negative":    func(s *Spec) { s.Channels, s.Latency = -1, &Latency{Read: Fixed(ms)} },
		"channels above limit": func(s *Spec) { s.Channels, s.Latency = MaxChannels+1, &Latency{Read: Fixed(ms)} },
		"bimodal bad ratio":    func(s *Spec) { s.Latency = &Latency{Read: Dist{Hit: ms, Miss: 2 * ms, HitRatio: 1}} },
	} {
		s := ok
		mod(&s)
		if err := s.withDefaults().Validate(); !errors.Is(err, ErrSpec) {
			t.Errorf("%s: %v", what, err)
		}
	}
}

// This machine's layout at the time of writing: blkio on v1, a v2 mount
// without the io controller.
const hybridMountinfo = `25 1 0:22 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
26 25 0:23 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
31 25 0:28 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
34 25 0:31 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

const v2Mountinfo = `30 1 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
`

func TestFindHierarchies(t *testing.T) {
	files := map[string]string{
		"/sys/fs/cgroup/unified/cgroup.controllers": "hugetlb\n",
		"/sys/fs/cgroup/cgroup.controllers":         "cpuset cpu io memory hugetlb pids rdma misc\n",
	}
	exists := func(p string) bool { return p == "/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device" }
	read := func(p string) string { return files[p] }

	hs, err := findHierarchies(strings.NewReader(hybridMountinfo), exists, read)
	if err != nil || len(hs) != 1 || hs[0] != (Hierarchy{Version: 1, Mount: "/sys/fs/cgroup/blkio"}) {
		t.Fatalf("hybrid: %+v %v", hs, err)
	}
	if _, err := PickHierarchy(hs, CgroupV2); !errors.Is(err, ErrNoThrottle) {
		t.Errorf("v2 asked on hybrid: %v", err)
	}
	if h, err := PickHierarchy(hs, CgroupAuto); err != nil || h.Version != 1 {
		t.Errorf("auto on hybrid: %+v %v", h, err)
	}

	hs, _ = findHierarchies(strings.NewReader(v2Mountinfo), exists, read)
	if len(hs) != 1 || hs[0] != (Hierarchy{Version: 2, Mount: "/sys/fs/cgroup"}) {
		t.Fatalf("v2: %+v", hs)
	}

	// v1 blkio without throttling compiled in, and v2 without io.
	hs, _ = findHierarchies(strings.NewReader(hybridMountinfo), func(string) bool { return false }, read)
	_, err = PickHierarchy(hs, CgroupAuto)
	var h interface{ Hint() string }
	if !errors.Is(err, ErrNoThrottle) || !errors.As(err, &h) || h.Hint() == "" {
		t.Errorf("no throttle: %v", err)
	}
}

func TestCgroupSetWritesKernelFormat(t *testing.T) {
	l := Limits{ReadIOPS: 120, WriteIOPS: 0, ReadBPS: 25e6, WriteBPS: 0.4}
	dir := t.TempDir()
	v2 := cgroup{Hierarchy: Hierarchy{Version: 2}, Dir: dir}
	if err := v2.set("7:3", l); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "io.max"))
	if got, want := string(b), "7:3 rbps=25000000 wbps=1 riops=120 wiops=max"; got != want {
		t.Errorf("io.max %q, want %q", got, want)
	}
	v1 := cgroup{Hierarchy: Hierarchy{Version: 1}, Dir: dir}
	if err := v1.set("7:3", l); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{"read_bps_device": "7:3 25000000", "write_bps_device": "7:3 1",
		"read_iops_device": "7:3 120", "write_iops_device": "7:3 0"} {
		b, _ := os.ReadFile(filepath.Join(dir, "blkio.throttle."+file))
		if string(b) != want {
			t.Errorf("%s %q, want %q", file, b, want)
		}
	}
}

func TestParseStat(t *testing.T) {
	a, err := parseStat("     100        0     1600       10      200        0     4096       20        0       30       30        0        0        0        0")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := parseStat("     150        0     2000       10      260        0     8192       20        0       30       30")
	u := usageBetween(a, b)
	if u != (Usage{ReadIOs: 50, WriteIOs: 60, ReadBytes: 400 * 512, WriteBytes: 4096 * 512}) {
		t.Errorf("usage %+v", u)
	}
	// A counter going back (device re-attached) is no IO, not a huge one.
	if u := usageBetween(b, a); u != (Usage{}) {
		t.Errorf("backwards: %+v", u)
	}
	if _, err := parseStat("1 2 3"); err == nil {
		t.Error("short stat accepted")
	}
}

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/mnt/a\040b`); got != "/mnt/a b" {
		t.Errorf("%q", got)
	}
}

func TestStalls(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(1000+int64(s), 0) }
	evs := []Event{{Event: EventStart, Time: at(0)}, {Event: EventStallEnd, Time: at(1)}, {Event: EventStallStart, Time: at(5)},
		{Event: EventStallEnd, Time: at(20)}, {Event: EventStallStart, Time: at(25)}, {Event: EventStop, Time: at(30)}}
	got := Stalls(evs)
	if len(got) != 1 || !got[0].Start.Equal(at(5)) || !got[0].End.Equal(at(20)) {
		t.Errorf("got %+v, want one stall from 5 to 20 (an end without a start and an open stall left out)", got)
	}
}

// TestFits: a sparse disk may take what is free less a reserve of 5% of
// the store, at least 1 GiB.
func TestFits(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		size         int64
		avail, total uint64
		ok           bool
	}{
		{4 * gib, 100 * gib, 200 * gib, true},
		{90 * gib, 100 * gib, 200 * gib, true},  // reserve 10 GiB
		{91 * gib, 100 * gib, 200 * gib, false}, //
		{3 * gib, 4 * gib, 10 * gib, true},      // reserve 1 GiB
		{3*gib + 1, 4 * gib, 10 * gib, false},   //
		{64 << 20, 512 << 20, 1 * gib, false},   // less free than the reserve
		{1 << 50, 1 << 45, 1 << 46, false},      // 1 PiB
		{4 * gib, 0, 200 * gib, false},          // full
	} {
		err := fits(c.size, c.avail, c.total, "the file system of /x", "or elsewhere")
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrNoSpace) {
			t.Errorf("fits(%d, %d, %d) = %v, want ok=%v", c.size, c.avail, c.total, err, c.ok)
		}
		var h interface{ Hint() string }
		if err != nil && (!errors.As(err, &h) || !strings.Contains(h.Hint(), "--size")) {
			t.Errorf("fits(%d, ...): no hint with a size: %v", c.size, err)
		}
	}
}

// TestSpecOptionsDevice: the flags of the device: a profile's caps become
// caps on reads and writes together inside the device; --channels,
// --total-iops and --total-bw reach the spec.
func TestSpecOptionsDevice(t *testing.T) {
	given := func(flags ...string) func(string) bool {
		return func(n string) bool {
			for _, f := range flags {
				if f == n {
					return true
				}
			}
			return false
		}
	}
	base := SpecOptions{Size: "1G", Scale: 1, Cgroup: "auto", Cache: "none"}
	o := base
	o.Profile, o.ThrottleAt, o.Set = "azure:P30", "device", given()
	s, err := o.Spec("p30", "/x")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Limits{TotalIOPS: 5000, TotalBPS: 200e6}); s.Limits != want || s.ThrottleAt != ThrottleDevice {
		t.Errorf("azure:P30 inside the device: %+v at %q, want %+v", s.Limits, s.ThrottleAt, want)
	}
	o = base
	o.ThrottleAt, o.TotalIOPS, o.TotalBW, o.ReadIOPS = "device", 2500, "125MB/s", 2000
	o.Channels.N, o.Latency = 4, "p50=1ms,p99=4ms"
	o.Set = given("total-iops", "total-bw", "read-iops", "latency")
	if s, err = o.Spec("ebs", "/x"); err != nil {
		t.Fatal(err)
	}
	if want := (Limits{ReadIOPS: 2000, TotalIOPS: 2500, TotalBPS: 125e6}); s.Limits != want || s.Channels != 4 || s.Latency == nil || s.Latency.Read.Pct != 99 {
		t.Errorf("spec %+v channels %d latency %+v", s.Limits, s.Channels, s.Latency)
	}
	if err := s.withDefaults().Validate(); err != nil {
		t.Error(err)
	}
	o = base
	o.ThrottleAt, o.Set = "beside", given()
	if _, err := o.Spec("x", "/x"); err == nil {
		t.Error("--throttle-at beside accepted")
	}
	o = base
	o.BW, o.Set = "125", given("bw")
	if _, err := o.Spec("x", "/x"); err == nil {
		t.Error("--bw 125 (no unit) accepted")
	}
}

// TestStateRoundTrip: what a disk of the device's kinds records in its
// state comes back whole, and valid.
func TestStateRoundTrip(t *testing.T) {
	root := t.TempDir()
	d := validState(root, "dev")
	d.Spec.ThrottleAt, d.Spec.Channels = ThrottleDevice, 8
	d.Spec.Limits = Limits{TotalIOPS: 2500, TotalBPS: 125e6, WriteIOPS: 2000}
	d.Spec.Latency = &Latency{Read: Dist{Hit: 200 * time.Microsecond, Miss: 8 * ms, HitRatio: 0.7},
		Write: Dist{Median: ms, Pct: 99, Tail: 4 * ms}, Flush: Dist{Median: 2 * ms, Jitter: ms}}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeState(b, root, "dev")
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Limits != d.Spec.Limits || got.Spec.Channels != 8 || got.Spec.ThrottleAt != ThrottleDevice || *got.Spec.Latency != *d.Spec.Latency {
		t.Errorf("state round trip: %+v, want %+v", got.Spec, d.Spec)
	}
	if got.LatencyMount == "" {
		t.Error("no latency layer for a disk with a device throttle")
	}
	// A state that no create would write is refused.
	d.Spec.ThrottleAt = "nowhere"
	b, _ = json.Marshal(d)
	if _, err := decodeState(b, root, "dev"); !errors.Is(err, ErrBadState) {
		t.Errorf("a state with throttle_at \"nowhere\": %v", err)
	}
}

// Issue 39.7: a profile with no published latency, given --latency, says
// the latency given is emulated, not "none emulated (add --latency)".
func TestLatencyNoteWithLatencyGiven(t *testing.T) {
	p, err := LookupProfile("azure:P15")
	if err != nil {
		t.Fatal(err)
	}
	s := Spec{Name: "x", SizeBytes: 1 << 30, FS: "ext4"}
	p.Apply(&s)
	var b strings.Builder
	WriteDisk(&b, &Disk{Name: "x", Spec: s})
	if p.Latency == nil && !strings.Contains(b.String(), "none emulated (add --latency)") {
		t.Errorf("without --latency:\n%s", b.String())
	}
	s.Latency = &Latency{Read: Fixed(2 * time.Millisecond), Write: Fixed(2 * time.Millisecond)}
	b.Reset()
	WriteDisk(&b, &Disk{Name: "x", Spec: s})
	if got := b.String(); strings.Contains(got, "none emulated") || !strings.Contains(got, "the latency given (--latency) is emulated") {
		t.Errorf("with --latency 2ms:\n%s", got)
	}
}
