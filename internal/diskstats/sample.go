package diskstats

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"
)

// Rates are iostat-style figures for one device over one interval (the
// formulas of sysstat's iostat; see the kernel's iostats.rst).
type Rates struct {
	ReadIOPS      float64 // r/s
	WriteIOPS     float64 // w/s
	ReadBWBytes   float64 // bytes/s read
	WriteBWBytes  float64 // bytes/s written
	ReadAwaitMs   float64 // ms per completed read, queueing included
	WriteAwaitMs  float64 // ms per completed write
	QueueSize     float64 // aqu-sz: mean requests in flight
	ReadReqBytes  float64 // mean read request size
	WriteReqBytes float64 // mean write request size
	// UtilPct is the share of time with at least one request in flight.
	// It does not show saturation on devices that serve requests in
	// parallel (SSDs, cloud volumes).
	UtilPct  float64
	InFlight uint64 // requests in flight at the end of the interval
}

// System is host-wide state over one interval.
type System struct {
	IowaitPct float64 // share of all CPU time spent in iowait
	// BusyPct is the share of all CPU time spent working (user, nice,
	// system, irq, softirq) or stolen by the hypervisor: 100 means the
	// host's CPUs, not the disk, set the pace.
	BusyPct        float64
	DirtyBytes     uint64
	WritebackBytes uint64
	// OtherUtilPct is the busy time of the disks the reader does not
	// keep, summed (a percent of the interval per disk): how much of the
	// host's iowait and IO pressure those disks can explain.
	OtherUtilPct float64
}

// Snapshot is the raw counters at one instant.
type Snapshot struct {
	At      time.Time
	Devices map[string]blockdevice.IOStats
	// CPU times in seconds, summed over CPUs.
	CPUTotal, CPUIowait, CPUBusy float64
	DirtyBytes                   uint64
	WritebackBytes               uint64
	// OtherIOTicks is the milliseconds with IO in flight, summed over the
	// whole disks (the entries of /sys/block) not kept.
	OtherIOTicks uint64
}

// Reader takes snapshots from a proc tree.
type Reader struct {
	block blockdevice.FS
	proc  procfs.FS
	sys   string
	// names restricts the devices kept; nil keeps all.
	names map[string]bool
	// others are the whole disks whose busy time is summed, worked out
	// again when /sys/block's listing (disks) changes.
	disks  string
	others map[string]bool
}

// NewReader reads from procRoot and sysRoot (default /proc and /sys).
// names limits the devices it keeps (nil or empty keeps every device);
// the busy time of the other whole disks is summed.
func NewReader(procRoot, sysRoot string, names []string) (*Reader, error) {
	if procRoot == "" {
		procRoot = "/proc"
	}
	if sysRoot == "" {
		sysRoot = "/sys"
	}
	b, err := blockdevice.NewFS(procRoot, sysRoot)
	if err != nil {
		return nil, err
	}
	p, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, err
	}
	r := &Reader{block: b, proc: p, sys: sysRoot}
	if len(names) > 0 {
		r.names = map[string]bool{}
		for _, n := range names {
			r.names[n] = true
		}
	}
	return r, nil
}

// Snapshot reads the counters now.
func (r *Reader) Snapshot(now time.Time) (Snapshot, error) {
	s := Snapshot{At: now, Devices: map[string]blockdevice.IOStats{}}
	stats, err := r.block.ProcDiskstats()
	if err != nil {
		return s, fmt.Errorf("reading diskstats: %w", err)
	}
	if r.names != nil {
		r.otherDisks()
	}
	for _, d := range stats {
		switch {
		case r.names == nil || r.names[d.DeviceName]:
			s.Devices[d.DeviceName] = d.IOStats
		case r.others[d.DeviceName]:
			s.OtherIOTicks += d.IOsTotalTicks
		}
	}
	st, err := r.proc.Stat()
	if err != nil {
		return s, fmt.Errorf("reading stat: %w", err)
	}
	c := st.CPUTotal
	s.CPUTotal = c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
	s.CPUIowait = c.Iowait
	s.CPUBusy = c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
	mi, err := r.proc.Meminfo()
	if err != nil {
		return s, fmt.Errorf("reading meminfo: %w", err)
	}
	if mi.Dirty != nil {
		s.DirtyBytes = *mi.Dirty * 1024
	}
	if mi.Writeback != nil {
		s.WritebackBytes = *mi.Writeback * 1024
	}
	return s, nil
}

// otherDisks works out which disks' busy time is summed: the whole disks
// of /sys/block, less those that carry the kept devices' own IO (the
// disk of a kept partition, the disks under a kept stacked device) and
// the stacked devices (dm, md), whose IO shows on the disks under them.
// Without a /sys/block to say which disks there are, none.
func (r *Reader) otherDisks() {
	l, err := r.block.SysBlockDevices()
	if err != nil {
		r.disks, r.others = "", nil
		return
	}
	sort.Strings(l)
	key := strings.Join(l, " ")
	if key == r.disks && r.others != nil {
		return
	}
	block := filepath.Join(r.sys, "block")
	mine := map[string]bool{}
	take := func(d string) {
		mine[d] = true
		for _, u := range Under(block, d) {
			mine[u] = true
		}
	}
	for _, d := range l {
		if r.names[d] {
			take(d)
			continue
		}
		for n := range r.names {
			if _, err := os.Stat(filepath.Join(block, d, n)); err == nil {
				take(d) // n is a partition of d
			}
		}
	}
	r.others = map[string]bool{}
	for _, d := range l {
		if !mine[d] && len(Under(block, d)) == 0 {
			r.others[d] = true
		}
	}
	r.disks = key
}

// Under lists the devices under device name, all the way down: the
// slaves of a stacked device (dm, md), theirs, and so on, as the
// directory dir (a sys root's block or class/block) shows them.
func Under(dir, name string) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(n string, depth int)
	walk = func(n string, depth int) {
		if depth > 16 {
			return
		}
		ents, _ := os.ReadDir(filepath.Join(dir, n, "slaves"))
		for _, e := range ents {
			if !seen[e.Name()] {
				seen[e.Name()] = true
				out = append(out, e.Name())
				walk(e.Name(), depth+1)
			}
		}
	}
	walk(name, 0)
	return out
}

// StackedPattern matches the kernel names of stacked devices (device
// mapper, md RAID), whose IO shows again on the disks under them; the
// node exporter names them the same way. A regular expression, whole
// names only.
const StackedPattern = "dm-[0-9]+|md[0-9]+"

var stackedRE = regexp.MustCompile("^(?:" + StackedPattern + ")$")

// Stacked says whether a device name is a stacked device's.
func Stacked(name string) bool { return stackedRE.MatchString(name) }

// deviceRates computes one device's rates between two snapshots.
func deviceRates(prev, cur blockdevice.IOStats, dt time.Duration) Rates {
	sec := dt.Seconds()
	if sec <= 0 {
		return Rates{}
	}
	dr := delta(cur.ReadIOs, prev.ReadIOs)
	dw := delta(cur.WriteIOs, prev.WriteIOs)
	drs := delta(cur.ReadSectors, prev.ReadSectors)
	dws := delta(cur.WriteSectors, prev.WriteSectors)
	r := Rates{
		ReadIOPS:     dr / sec,
		WriteIOPS:    dw / sec,
		ReadBWBytes:  drs * 512 / sec, // diskstats sectors are always 512 bytes
		WriteBWBytes: dws * 512 / sec,
		QueueSize:    delta(cur.WeightedIOTicks, prev.WeightedIOTicks) / (sec * 1000),
		UtilPct:      min(100, delta(cur.IOsTotalTicks, prev.IOsTotalTicks)/(sec*1000)*100),
		InFlight:     cur.IOsInProgress,
	}
	if dr > 0 {
		r.ReadAwaitMs = delta(cur.ReadTicks, prev.ReadTicks) / dr
		r.ReadReqBytes = drs * 512 / dr
	}
	if dw > 0 {
		r.WriteAwaitMs = delta(cur.WriteTicks, prev.WriteTicks) / dw
		r.WriteReqBytes = dws * 512 / dw
	}
	return r
}

// delta tolerates a counter that went backwards (32-bit wrap on old
// kernels, device re-attached) by treating the interval as empty.
func delta(cur, prev uint64) float64 {
	if cur < prev {
		return 0
	}
	return float64(cur - prev)
}

// systemRates computes host-wide state between two snapshots.
func systemRates(prev, cur Snapshot) System {
	s := System{DirtyBytes: cur.DirtyBytes, WritebackBytes: cur.WritebackBytes}
	if dt := cur.CPUTotal - prev.CPUTotal; dt > 0 {
		s.IowaitPct = (cur.CPUIowait - prev.CPUIowait) / dt * 100
		s.BusyPct = (cur.CPUBusy - prev.CPUBusy) / dt * 100
	}
	// A disk that went away or came lowers or raises the sum: the
	// former reads as an empty interval, the latter as busy, which
	// only makes the host's waiting harder to pin on a kept disk.
	if sec := cur.At.Sub(prev.At).Seconds(); sec > 0 {
		s.OtherUtilPct = delta(cur.OtherIOTicks, prev.OtherIOTicks) / (sec * 1000) * 100
	}
	return s
}

// Tick is one interval's figures for every sampled device.
type Tick struct {
	At      time.Time
	Devices map[string]Rates
	System  System
}

// Sample takes a snapshot every interval until ctx ends and calls fn with
// the rates over each interval. It returns nil when ctx ends; a failing
// read ends sampling with its error.
func (r *Reader) Sample(ctx context.Context, interval time.Duration, fn func(Tick)) error {
	prev, err := r.Snapshot(time.Now())
	if err != nil {
		return err
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			cur, err := r.Snapshot(now)
			if err != nil {
				return err
			}
			fn(Diff(prev, cur))
			prev = cur
		}
	}
}

// Diff turns two snapshots into a Tick.
func Diff(prev, cur Snapshot) Tick {
	tk := Tick{At: cur.At, Devices: map[string]Rates{}, System: systemRates(prev, cur)}
	dt := cur.At.Sub(prev.At)
	for name, c := range cur.Devices {
		if p, ok := prev.Devices[name]; ok {
			tk.Devices[name] = deviceRates(p, c, dt)
		}
	}
	return tk
}

func sortStrings(s []string) { sort.Strings(s) }
