package watch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/iolens/iolens/internal/result"
)

// ioCounters are a cgroup's cumulative IO to one device.
type ioCounters struct{ rbytes, wbytes, rios, wios uint64 }

// Cgroups attributes IO to cgroups from the kernel's own accounting:
// cgroup v2 io.stat, or cgroup v1 blkio.throttle.io_service_bytes and
// io_serviced. On v1, buffered writes are written back by kernel threads
// in the root cgroup, so they show there, not under the writer.
type Cgroups struct {
	// Dir is the hierarchy: /sys/fs/cgroup (v2), /sys/fs/cgroup/blkio
	// (v1) or /sys/fs/cgroup/unified (hybrid with io on v2).
	Dir string
	V2  bool
	// Proc is the proc root used to name processes.
	Proc string
	// Pods names Kubernetes pods by UID; nil leaves only the UID.
	Pods PodNamer

	prev map[string]map[string]ioCounters
	// byProc is set when the kernel accounts no block IO to cgroups for
	// the watched devices (cgroup v1 on kernels that only count IO on
	// queues with a throttle limit): IO is then read per process from
	// /proc/PID/io and grouped by cgroup, for all devices together.
	byProc   bool
	probed   bool
	procPrev map[int]procIO
	procNow  map[string][]pidRate
}

type pidRate struct {
	pid  int
	rate float64
}

// procIO is a process's storage IO: bytes it caused to be read from or
// sent to the block layer (writes count when pages are dirtied).
type procIO struct {
	cg     string
	rb, wb uint64
}

// ErrNoIOAccounting means no cgroup hierarchy accounts for block IO.
var ErrNoIOAccounting = errors.New("no cgroup hierarchy with IO accounting (cgroup v2 io controller or v1 blkio)")

// FindCgroups finds the hierarchy that accounts for block IO under root
// (default /sys/fs/cgroup).
func FindCgroups(root, procRoot string) (*Cgroups, error) {
	root = orDefault(root, "/sys/fs/cgroup")
	hasIO := func(dir string) bool {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
		return err == nil && contains(strings.Fields(string(b)), "io")
	}
	switch {
	case hasIO(root):
		return &Cgroups{Dir: root, V2: true, Proc: orDefault(procRoot, "/proc")}, nil
	case exists(filepath.Join(root, "blkio", "blkio.throttle.io_service_bytes")):
		return &Cgroups{Dir: filepath.Join(root, "blkio"), Proc: orDefault(procRoot, "/proc")}, nil
	case hasIO(filepath.Join(root, "unified")):
		return &Cgroups{Dir: filepath.Join(root, "unified"), V2: true, Proc: orDefault(procRoot, "/proc")}, nil
	}
	return nil, ErrNoIOAccounting
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// Sample reads every cgroup's counters and returns the IO of the last
// interval (dt) per cgroup and device, heaviest first, limited to the
// devices in majmin (major:minor -> name). The first call only primes.
func (c *Cgroups) Sample(dt time.Duration, majmin map[string]string) ([]result.WatchCgroup, error) {
	if c.byProc {
		return c.sampleProcs(dt)
	}
	cur := map[string]map[string]ioCounters{}
	if err := c.walk(c.Dir, "/", majmin, cur); err != nil {
		return nil, err
	}
	if !c.probed {
		c.probed = true
		if !c.V2 && len(cur) == 0 {
			c.byProc = true
			return c.sampleProcs(dt)
		}
	}
	prev := c.prev
	c.prev = cur
	if prev == nil || dt <= 0 {
		return nil, nil
	}
	sec := dt.Seconds()
	var out []result.WatchCgroup
	for cg, devs := range cur {
		for mm, n := range devs {
			p, ok := prev[cg][mm]
			if !ok {
				continue
			}
			e := result.WatchCgroup{Device: majmin[mm], Cgroup: cg,
				ReadBWBytes: delta(n.rbytes, p.rbytes) / sec, WriteBWBytes: delta(n.wbytes, p.wbytes) / sec,
				ReadIOPS: delta(n.rios, p.rios) / sec, WriteIOPS: delta(n.wios, p.wios) / sec}
			if e.ReadBWBytes+e.WriteBWBytes+e.ReadIOPS+e.WriteIOPS > 0 {
				out = append(out, e)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if wa, wb := weight(a), weight(b); wa != wb {
			return wa > wb
		}
		if a.Cgroup != b.Cgroup {
			return a.Cgroup < b.Cgroup
		}
		return a.Device < b.Device
	})
	return out, nil
}

// ByProcess reports whether IO is attributed from /proc/PID/io.
func (c *Cgroups) ByProcess() bool { return c.byProc }

func (c *Cgroups) sampleProcs(dt time.Duration) ([]result.WatchCgroup, error) {
	ents, err := os.ReadDir(c.Proc)
	if err != nil {
		return nil, err
	}
	cur := make(map[int]procIO, len(c.procPrev))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(c.Proc, e.Name(), "io"))
		if err != nil {
			continue // gone, or not ours to read
		}
		var p procIO
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ": ")
			if !ok {
				continue
			}
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			switch k {
			case "read_bytes":
				p.rb = n
			case "write_bytes":
				p.wb = n
			}
		}
		if old, ok := c.procPrev[pid]; ok {
			p.cg = old.cg
		} else {
			p.cg = c.procCgroup(pid)
		}
		cur[pid] = p
	}
	prev := c.procPrev
	c.procPrev = cur
	if prev == nil || dt <= 0 {
		return nil, nil
	}
	sec := dt.Seconds()
	agg := map[string]*result.WatchCgroup{}
	c.procNow = map[string][]pidRate{}
	for pid, p := range cur {
		o, ok := prev[pid]
		if !ok {
			continue
		}
		r, w := delta(p.rb, o.rb)/sec, delta(p.wb, o.wb)/sec
		if r+w == 0 {
			continue
		}
		e := agg[p.cg]
		if e == nil {
			e = &result.WatchCgroup{Cgroup: p.cg}
			agg[p.cg] = e
		}
		e.ReadBWBytes += r
		e.WriteBWBytes += w
		c.procNow[p.cg] = append(c.procNow[p.cg], pidRate{pid, r + w})
	}
	out := make([]result.WatchCgroup, 0, len(agg))
	for _, e := range agg {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool {
		if wa, wb := weight(out[i]), weight(out[j]); wa != wb {
			return wa > wb
		}
		return out[i].Cgroup < out[j].Cgroup
	})
	return out, nil
}

// procCgroup is a process's cgroup in the hierarchy being read.
func (c *Cgroups) procCgroup(pid int) string {
	b, err := os.ReadFile(filepath.Join(c.Proc, strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return "?"
	}
	unified := "/"
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if contains(strings.Split(parts[1], ","), "blkio") {
			return parts[2]
		}
		if parts[0] == "0" {
			unified = parts[2]
		}
	}
	return unified
}

// weight orders cgroups: bytes, with each IO counted as at least 4 KiB so
// that small random IO is not outweighed by one large sequential stream.
func weight(c result.WatchCgroup) float64 {
	return max(c.ReadBWBytes, c.ReadIOPS*4096) + max(c.WriteBWBytes, c.WriteIOPS*4096)
}

func delta(cur, prev uint64) float64 {
	if cur < prev {
		return 0
	}
	return float64(cur - prev)
}

func (c *Cgroups) walk(dir, rel string, majmin map[string]string, out map[string]map[string]ioCounters) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if rel == "/" {
			return err
		}
		return nil // a cgroup removed while walking
	}
	leaf := true
	for _, e := range ents {
		if e.IsDir() {
			leaf = false
			if err := c.walk(filepath.Join(dir, e.Name()), path(rel, e.Name()), majmin, out); err != nil {
				return err
			}
		}
	}
	// On v2 io.stat includes the descendants and only leaves hold
	// processes; on v1 the plain (non-recursive) files are the cgroup's own.
	if c.V2 {
		if !leaf || rel == "/" {
			return nil
		}
		if b, err := os.ReadFile(filepath.Join(dir, "io.stat")); err == nil {
			if m := parseIOStat(b, majmin); len(m) > 0 {
				out[rel] = m
			}
		}
		return nil
	}
	b1, err1 := os.ReadFile(filepath.Join(dir, "blkio.throttle.io_service_bytes"))
	b2, err2 := os.ReadFile(filepath.Join(dir, "blkio.throttle.io_serviced"))
	if err1 == nil && err2 == nil {
		if m := parseBlkio(b1, b2, majmin); len(m) > 0 {
			out[rel] = m
		}
	}
	return nil
}

func path(rel, name string) string {
	if rel == "/" {
		return "/" + name
	}
	return rel + "/" + name
}

// deviceKeys calls fn with each line of a cgroup v2 io.stat or io.max
// file whose device is one of majmin's, and the line's key=value pairs
// whose values are unsigned integers, as the kernel writes them ("max",
// other words, signs, NaN and exponents are left out).
func deviceKeys(b []byte, majmin map[string]string, fn func(dev string, kv map[string]uint64)) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		if _, ok := majmin[f[0]]; !ok {
			continue
		}
		kv := map[string]uint64{}
		for _, p := range f[1:] {
			k, v, ok := strings.Cut(p, "=")
			if !ok {
				continue
			}
			if x, err := strconv.ParseUint(v, 10, 64); err == nil {
				kv[k] = x
			}
		}
		fn(f[0], kv)
	}
}

// parseIOStat reads cgroup v2 io.stat lines:
// "253:0 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0".
func parseIOStat(b []byte, majmin map[string]string) map[string]ioCounters {
	out := map[string]ioCounters{}
	deviceKeys(b, majmin, func(dev string, kv map[string]uint64) {
		out[dev] = ioCounters{rbytes: kv["rbytes"], wbytes: kv["wbytes"], rios: kv["rios"], wios: kv["wios"]}
	})
	return out
}

// parseBlkio reads cgroup v1 blkio.throttle files: "8:0 Read 4096" lines
// per device and operation, in bytes (io_service_bytes) and in IOs
// (io_serviced).
func parseBlkio(bytesFile, iosFile []byte, majmin map[string]string) map[string]ioCounters {
	out := map[string]ioCounters{}
	read := func(b []byte, set func(n *ioCounters, op string, v uint64)) {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) != 3 {
				continue
			}
			if _, ok := majmin[f[0]]; !ok {
				continue
			}
			v, err := strconv.ParseUint(f[2], 10, 64)
			if err != nil {
				continue
			}
			n := out[f[0]]
			set(&n, f[1], v)
			out[f[0]] = n
		}
	}
	read(bytesFile, func(n *ioCounters, op string, v uint64) {
		switch op {
		case "Read":
			n.rbytes = v
		case "Write":
			n.wbytes = v
		}
	})
	read(iosFile, func(n *ioCounters, op string, v uint64) {
		switch op {
		case "Read":
			n.rios = v
		case "Write":
			n.wios = v
		}
	})
	return out
}

// Describe fills in processes and the Kubernetes pod of a cgroup entry.
// Processes are read from cgroup.procs, so they are only visible when
// the reader shares the PID namespace of the processes (hostPID in a pod).
func (c *Cgroups) Describe(e *result.WatchCgroup, maxProcs int) {
	if ref, ok := ParseKubePath(e.Cgroup); ok {
		e.PodUID, e.Container = ref.UID, ref.ContainerID
		if c.Pods != nil {
			if ns, name, cname, ok := c.Pods.Pod(ref.UID, ref.ContainerID); ok {
				e.Namespace, e.Pod = ns, name
				if cname != "" {
					e.Container = cname
				}
			}
		}
	}
	if maxProcs <= 0 {
		return
	}
	var pids []string
	if c.byProc {
		// The processes that did the IO, heaviest first.
		pr := c.procNow[e.Cgroup]
		sort.Slice(pr, func(i, j int) bool {
			if pr[i].rate != pr[j].rate {
				return pr[i].rate > pr[j].rate
			}
			return pr[i].pid < pr[j].pid
		})
		for _, p := range pr {
			pids = append(pids, strconv.Itoa(p.pid))
		}
	} else {
		b, err := os.ReadFile(filepath.Join(c.Dir, filepath.FromSlash(e.Cgroup), "cgroup.procs"))
		if err != nil {
			return
		}
		pids = strings.Fields(string(b))
	}
	for _, f := range pids {
		if len(e.Processes) >= maxProcs {
			break
		}
		if f == "0" {
			continue
		}
		comm, err := os.ReadFile(filepath.Join(c.Proc, f, "comm"))
		if err != nil {
			continue
		}
		e.Processes = append(e.Processes, f+" "+strings.TrimSpace(string(comm)))
	}
}

// KubeRef is what a kubelet-made cgroup path says about its pod.
type KubeRef struct {
	QoS         string // guaranteed, burstable or besteffort
	UID         string
	ContainerID string // empty for the pod-level cgroup
}

var (
	podCgroupfs = regexp.MustCompile(`^pod([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`)
	podSystemd  = regexp.MustCompile(`^kubepods(?:-(burstable|besteffort))?-pod([0-9a-f]{8}_[0-9a-f]{4}_[0-9a-f]{4}_[0-9a-f]{4}_[0-9a-f]{12})\.slice$`)
	ctrSystemd  = regexp.MustCompile(`^(?:cri-containerd|crio|docker|containerd)-([0-9a-f]{12,64})\.scope$`)
	ctrPlain    = regexp.MustCompile(`^([0-9a-f]{12,64})$`)
)

// ParseKubePath reads the kubelet's cgroup naming, with the cgroupfs
// driver (/kubepods/burstable/pod<uid>/<container id>) and the systemd
// driver (/kubepods.slice/kubepods-burstable.slice/
// kubepods-burstable-pod<uid with _>.slice/cri-containerd-<id>.scope).
func ParseKubePath(p string) (KubeRef, bool) {
	if !strings.Contains(p, "kubepods") {
		return KubeRef{}, false
	}
	segs := strings.Split(strings.Trim(p, "/"), "/")
	var ref KubeRef
	found := false
	for i, s := range segs {
		if m := podCgroupfs.FindStringSubmatch(s); m != nil {
			ref.UID, found = m[1], true
			if i > 0 && (segs[i-1] == "burstable" || segs[i-1] == "besteffort") {
				ref.QoS = segs[i-1]
			} else {
				ref.QoS = "guaranteed"
			}
		} else if m := podSystemd.FindStringSubmatch(s); m != nil {
			ref.UID, found = strings.ReplaceAll(m[2], "_", "-"), true
			ref.QoS = m[1]
			if ref.QoS == "" {
				ref.QoS = "guaranteed"
			}
		} else if found && ref.ContainerID == "" {
			if m := ctrSystemd.FindStringSubmatch(s); m != nil {
				ref.ContainerID = m[1]
			} else if m := ctrPlain.FindStringSubmatch(s); m != nil {
				ref.ContainerID = m[1]
			}
		}
	}
	return ref, found
}

// PodNamer names a pod (and a container, when it can) from its UID.
type PodNamer interface {
	Pod(uid, containerID string) (namespace, name, container string, ok bool)
}

// KubeletDirs names pods from the kubelet's pod log directories, named
// <namespace>_<name>_<uid> (default /var/log/pods), without any API
// access. Container IDs are not named there.
type KubeletDirs struct {
	LogDir string

	mu      sync.Mutex
	byUID   map[string][2]string
	scanned time.Time
}

// Pod implements PodNamer. An unknown UID rescans the directory, at most
// every 10 s.
func (k *KubeletDirs) Pod(uid, _ string) (string, string, string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if v, ok := k.byUID[uid]; ok {
		return v[0], v[1], "", true
	}
	if time.Since(k.scanned) < 10*time.Second {
		return "", "", "", false
	}
	k.scanned = time.Now()
	k.byUID = map[string][2]string{}
	ents, err := os.ReadDir(orDefault(k.LogDir, "/var/log/pods"))
	if err != nil {
		return "", "", "", false
	}
	for _, e := range ents {
		parts := strings.Split(e.Name(), "_")
		if len(parts) == 3 {
			k.byUID[parts[2]] = [2]string{parts[0], parts[1]}
		}
	}
	v, ok := k.byUID[uid]
	return v[0], v[1], "", ok
}

// PodNamers tries each namer in turn.
type PodNamers []PodNamer

// Pod implements PodNamer.
func (ps PodNamers) Pod(uid, cid string) (string, string, string, bool) {
	for _, p := range ps {
		if p == nil {
			continue
		}
		if ns, n, c, ok := p.Pod(uid, cid); ok {
			return ns, n, c, true
		}
	}
	return "", "", "", false
}

func (c *Cgroups) String() string {
	v := "v1 blkio"
	if c.V2 {
		v = "v2 io.stat"
	}
	return fmt.Sprintf("%s at %s", v, c.Dir)
}
