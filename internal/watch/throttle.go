package watch

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/units"
)

// A block throttle (cgroup v1 blkio.throttle.*, v2 io.max) holds IO above
// the device: requests wait in the throttle's queue, so the device shows
// nothing in flight, and with asynchronous IO (libaio, io_uring) no task
// is in iowait either. What is left to see is the cgroup itself: its IO
// to the device running at its cap.

// hold is a throttle cap that a cgroup's IO ran into over one interval.
type hold struct {
	cgroup string
	limit  string  // rbps, wbps, riops or wiops, as io.max names them
	cap    float64 // IOs or bytes per second
	// lowered is set when the cap went down during the interval: the
	// cgroup ran faster than it for part of it.
	lowered bool
}

func (h hold) iops() bool { return strings.HasSuffix(h.limit, "iops") }

func (h hold) String() string {
	v := fmt.Sprintf("%.0f", h.cap)
	if !h.iops() {
		v = units.BytesSI(h.cap) + "/s"
	}
	if h.lowered {
		return fmt.Sprintf("the throttle cap of cgroup %s went down to %s=%s", h.cgroup, h.limit, v)
	}
	return fmt.Sprintf("cgroup %s at its throttle cap %s=%s", h.cgroup, h.limit, v)
}

// capLimits are one cgroup's caps on one device, per second; 0 is none.
type capLimits struct{ rbps, wbps, riops, wiops float64 }

func (c capLimits) any() bool { return c != capLimits{} }

// field is the cap of a limit, by its io.max name; nil for another name.
func (c *capLimits) field(limit string) *float64 {
	switch limit {
	case "rbps":
		return &c.rbps
	case "wbps":
		return &c.wbps
	case "riops":
		return &c.riops
	case "wiops":
		return &c.wiops
	}
	return nil
}

func (c capLimits) get(limit string) float64 {
	if f := c.field(limit); f != nil {
		return *f
	}
	return 0
}

// v1CapFiles are the cgroup v1 files of each io.max limit.
var v1CapFiles = []struct{ limit, file string }{
	{"rbps", "blkio.throttle.read_bps_device"}, {"wbps", "blkio.throttle.write_bps_device"},
	{"riops", "blkio.throttle.read_iops_device"}, {"wiops", "blkio.throttle.write_iops_device"},
}

// throttles follows the cgroups that have a throttle cap on a watched
// device. The hierarchy is walked for caps every rescan; between walks
// only the capped cgroups are read, caps included, since a cap can change
// at any time (the emulator's controller changes them every few seconds).
type throttles struct {
	dir string
	v2  bool
	// watched maps major:minor to the watched devices' names (the
	// watcher's map, which grows as devices are discovered); majmin adds
	// the host's other whole disks at every walk: a cap that holds IO
	// on another disk explains the host's IO waiting as well as one on
	// a watched device does.
	watched map[string]string
	majmin  map[string]string
	sys     sysBlock
	rescan  time.Duration
	scanned time.Time
	cgs     map[string]*throttled // by path in the hierarchy
	// held: the devices with a hold in the last interval sampled.
	held map[string]bool
}

type throttled struct {
	caps map[string]capLimits // by major:minor
	prev map[string]ioCounters
	// active is when reads ([0]) and writes ([1]) last completed;
	// meanIO their last mean size, in bytes.
	active map[string][2]time.Time
	meanIO map[string][2]float64
	primed bool
}

// atCapShare is the share of its cap a cgroup's IO must reach, less one
// IO for the interval's quantisation (1 IOPS is 0, 1 or 2 IOs in a
// second), for the cap to hold it. The IO must also be recent: a held
// cgroup completes IO at the cap's pace, so none in this interval or the
// one before, nor in twice the time one IO takes under the cap, means
// nothing waits.
const atCapShare = 0.8

// throttleScan is how often the hierarchy is walked for new caps.
const throttleScan = 10 * time.Second

// newThrottles reads the hierarchy of cg, or finds one under sysRoot; nil
// when there is none.
func newThrottles(cg *Cgroups, sysRoot string, majmin map[string]string) *throttles {
	if cg == nil {
		var err error
		if cg, err = FindCgroups(filepath.Join(orDefault(sysRoot, "/sys"), "fs", "cgroup"), ""); err != nil {
			return nil
		}
	}
	return &throttles{dir: cg.Dir, v2: cg.V2, watched: majmin, majmin: majmin, sys: sysBlock{sysRoot}, rescan: throttleScan, cgs: map[string]*throttled{}}
}

// disks maps major:minor to a name for every whole disk of the host
// (/sys/block) and every watched device. A cap on the disk of a watched
// partition keeps the disk's name: which of its partitions' IO it holds
// the cgroup's counters do not say.
func (th *throttles) disks() map[string]string {
	out := map[string]string{}
	ents, _ := os.ReadDir(filepath.Join(th.sys.sys(), "block"))
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join(th.sys.sys(), "block", e.Name(), "dev")); err == nil {
			out[strings.TrimSpace(string(b))] = e.Name()
		}
	}
	for mm, n := range th.watched {
		out[mm] = n
	}
	return out
}

// sample reads the capped cgroups and returns, by device name, the caps
// that held IO over the interval of dt seconds ending now.
func (th *throttles) sample(now time.Time, dt float64) map[string][]hold {
	if th == nil {
		return nil
	}
	if th.scanned.IsZero() || now.Sub(th.scanned) >= th.rescan {
		th.scanned = now
		th.majmin = th.disks()
		found := map[string]*throttled{}
		th.walk(th.dir, "/", found)
		for p := range found {
			// Known ones keep their state, caps included: those are
			// what the caps read below are compared with.
			if old := th.cgs[p]; old != nil {
				found[p] = old
			}
		}
		th.cgs = found
	}
	var out map[string][]hold
	for p, c := range th.cgs {
		dir := filepath.Join(th.dir, filepath.FromSlash(p))
		caps, ok := th.readCaps(dir)
		if !ok {
			delete(th.cgs, p) // removed
			continue
		}
		was := c.caps
		c.caps = caps
		cur := th.readCounters(dir)
		prev, primed := c.prev, c.primed
		c.prev, c.primed = cur, true
		if !primed || dt <= 0 {
			continue
		}
		for mm, lim := range caps {
			n, ok1 := cur[mm]
			o, ok2 := prev[mm]
			if !ok1 || !ok2 {
				continue
			}
			rios, wios := delta(n.rios, o.rios), delta(n.wios, o.wios)
			rb, wb := delta(n.rbytes, o.rbytes), delta(n.wbytes, o.wbytes)
			act, mean := c.active[mm], c.meanIO[mm]
			if rios > 0 {
				act[0], mean[0] = now, rb/rios
			}
			if wios > 0 {
				act[1], mean[1] = now, wb/wios
			}
			c.active[mm], c.meanIO[mm] = act, mean
			for _, x := range []struct {
				limit       string
				cap, served float64
				dir         int
				iops        bool
			}{{"riops", lim.riops, rios, 0, true}, {"wiops", lim.wiops, wios, 1, true}, {"rbps", lim.rbps, rb, 0, false}, {"wbps", lim.wbps, wb, 1, false}} {
				if x.cap <= 0 || act[x.dir].IsZero() {
					continue
				}
				quantum := 1.0
				if !x.iops {
					quantum = max(mean[x.dir], 4096)
				}
				if now.Sub(act[x.dir]).Seconds() > max(dt, 2*quantum/x.cap)+dt/4 {
					continue
				}
				if x.served >= atCapShare*x.cap*dt-quantum {
					if out == nil {
						out = map[string][]hold{}
					}
					before := was[mm].get(x.limit)
					dev := th.majmin[mm]
					out[dev] = append(out[dev], hold{cgroup: p, limit: x.limit, cap: x.cap, lowered: before == 0 || before > x.cap})
				}
			}
		}
	}
	return out
}

// recent returns the devices held in this interval (holds) or the one
// before, and remembers this one's.
func (th *throttles) recent(holds map[string][]hold) map[string]bool {
	if th == nil {
		return nil
	}
	out := th.held
	th.held = map[string]bool{}
	for n, hs := range holds {
		if len(hs) > 0 {
			th.held[n] = true
		}
	}
	if out == nil {
		out = map[string]bool{}
	}
	for n := range th.held {
		out[n] = true
	}
	return out
}

// walk finds the cgroups with a cap on a disk.
func (th *throttles) walk(dir, rel string, out map[string]*throttled) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return // removed while walking
	}
	if caps, ok := th.readCaps(dir); ok && len(caps) > 0 {
		out[rel] = &throttled{caps: caps, active: map[string][2]time.Time{}, meanIO: map[string][2]float64{}}
	}
	for _, e := range ents {
		if e.IsDir() {
			th.walk(filepath.Join(dir, e.Name()), path(rel, e.Name()), out)
		}
	}
}

// readCaps reads a cgroup's caps on the disks; ok is false
// when the cgroup is gone.
func (th *throttles) readCaps(dir string) (map[string]capLimits, bool) {
	if th.v2 {
		b, err := os.ReadFile(filepath.Join(dir, "io.max"))
		if err != nil {
			_, serr := os.Stat(dir)
			return nil, serr == nil
		}
		return parseIOMax(b, th.majmin), true
	}
	out := map[string]capLimits{}
	found := false
	for _, f := range v1CapFiles {
		b, err := os.ReadFile(filepath.Join(dir, f.file))
		if err != nil {
			continue
		}
		found = true
		for mm, v := range parseBlkioCaps(b, th.majmin) {
			l := out[mm]
			*l.field(f.limit) = v
			out[mm] = l
		}
	}
	for mm, l := range out {
		if !l.any() {
			delete(out, mm)
		}
	}
	return out, found
}

// readCounters reads what a cgroup and its descendants did on each
// disk: io.stat is recursive on v2; on v1 a cap holds the whole
// subtree, so the recursive files are the ones to compare with it.
func (th *throttles) readCounters(dir string) map[string]ioCounters {
	if th.v2 {
		b, _ := os.ReadFile(filepath.Join(dir, "io.stat"))
		return parseIOStat(b, th.majmin)
	}
	b1, _ := os.ReadFile(filepath.Join(dir, "blkio.throttle.io_service_bytes_recursive"))
	b2, _ := os.ReadFile(filepath.Join(dir, "blkio.throttle.io_serviced_recursive"))
	return parseBlkio(b1, b2, th.majmin)
}

// parseIOMax reads cgroup v2 io.max lines:
// "7:3 rbps=max wbps=20000000 riops=max wiops=1".
func parseIOMax(b []byte, majmin map[string]string) map[string]capLimits {
	out := map[string]capLimits{}
	deviceKeys(b, majmin, func(dev string, kv map[string]uint64) {
		l := capLimits{rbps: float64(kv["rbps"]), wbps: float64(kv["wbps"]), riops: float64(kv["riops"]), wiops: float64(kv["wiops"])}
		if l.any() {
			out[dev] = l
		}
	})
	return out
}

// parseBlkioCaps reads a cgroup v1 blkio.throttle.*_device file: one
// "7:3 1048576" line per capped device.
func parseBlkioCaps(b []byte, majmin map[string]string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		if _, ok := majmin[f[0]]; !ok {
			continue
		}
		// The kernel writes an unsigned integer; anything else (a sign,
		// NaN, an exponent) is not a cap.
		if v, err := strconv.ParseUint(f[1], 10, 64); err == nil && v > 0 {
			out[f[0]] = float64(v)
		}
	}
	return out
}
