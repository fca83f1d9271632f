package emulate

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/hint"
)

// ErrNoThrottle is returned when neither cgroup interface can throttle
// block IO here.
var ErrNoThrottle = errors.New("no block IO throttling available")

// cgroupParent is the directory, under the hierarchy's root, that holds
// every emulated disk's cgroup.
const cgroupParent = "iolens-emulate"

// Hierarchy is one cgroup mount that can throttle block IO.
type Hierarchy struct {
	// Version is 1 (blkio.throttle.*) or 2 (io.max).
	Version int
	// Mount is where the hierarchy is mounted, e.g. /sys/fs/cgroup/blkio.
	Mount string
}

// FindHierarchies lists the cgroup mounts able to throttle block IO, v2
// first, from a mountinfo file (normally /proc/self/mountinfo). A v2 mount
// counts only if its io controller is available there; a v1 mount only if
// it has the blkio controller with throttling compiled in.
func FindHierarchies(mountinfo string) ([]Hierarchy, error) {
	f, err := os.Open(mountinfo)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return findHierarchies(f, func(p string) bool { _, err := os.Stat(p); return err == nil },
		func(p string) string { b, _ := os.ReadFile(p); return string(b) })
}

func findHierarchies(r io.Reader, exists func(string) bool, read func(string) string) ([]Hierarchy, error) {
	var v1, v2 []Hierarchy
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		// id parent maj:min root mountpoint opts [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 {
			continue
		}
		mp := unescapeMount(pf[4])
		switch qf[0] {
		case "cgroup2":
			if hasWord(read(filepath.Join(mp, "cgroup.controllers")), "io") {
				v2 = append(v2, Hierarchy{Version: 2, Mount: mp})
			}
		case "cgroup":
			if hasOpt(qf[2], "blkio") && exists(filepath.Join(mp, "blkio.throttle.read_bps_device")) {
				v1 = append(v1, Hierarchy{Version: 1, Mount: mp})
			}
		}
	}
	return append(v2, v1...), sc.Err()
}

func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

func hasOpt(opts, o string) bool {
	for _, f := range strings.Split(opts, ",") {
		if f == o {
			return true
		}
	}
	return false
}

// PickHierarchy chooses the hierarchy for mode from what FindHierarchies
// found, with an error saying what is missing.
func PickHierarchy(hs []Hierarchy, mode CgroupMode) (Hierarchy, error) {
	for _, h := range hs {
		if mode == CgroupAuto || mode == CgroupV1 && h.Version == 1 || mode == CgroupV2 && h.Version == 2 {
			return h, nil
		}
	}
	switch mode {
	case CgroupV2:
		return Hierarchy{}, &hint.Error{Err: fmt.Errorf("%w: the io controller is not available on cgroup v2", ErrNoThrottle),
			Advice: "it is bound to a cgroup v1 hierarchy or not enabled; use --cgroup v1, or boot with systemd.unified_cgroup_hierarchy=1"}
	case CgroupV1:
		return Hierarchy{}, &hint.Error{Err: fmt.Errorf("%w: no cgroup v1 blkio hierarchy with throttling", ErrNoThrottle),
			Advice: "use --cgroup v2, or mount one: mount -t cgroup -o blkio none /sys/fs/cgroup/blkio"}
	}
	return Hierarchy{}, &hint.Error{Err: fmt.Errorf("%w: neither a cgroup v2 io controller nor a v1 blkio hierarchy is mounted", ErrNoThrottle),
		Advice: "the kernel needs CONFIG_BLK_DEV_THROTTLING; on cgroup v2 enable the io controller, on v1 mount the blkio controller"}
}

// cgroup is one emulated disk's cgroup.
type cgroup struct {
	Hierarchy
	Dir string
}

func cgroupFor(h Hierarchy, leaf string) cgroup {
	return cgroup{Hierarchy: h, Dir: filepath.Join(h.Mount, cgroupParent, leaf)}
}

func (c cgroup) procsFile() string { return filepath.Join(c.Dir, "cgroup.procs") }

// create makes the cgroup; on v2 it first enables the io controller for
// the parents' children.
func (c cgroup) create() error {
	parent := filepath.Dir(c.Dir)
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("creating cgroup %s: %w", parent, err)
	}
	if c.Version == 2 {
		for _, d := range []string{c.Mount, parent} {
			if hasWord(readString(filepath.Join(d, "cgroup.subtree_control")), "io") {
				continue
			}
			if err := os.WriteFile(filepath.Join(d, "cgroup.subtree_control"), []byte("+io"), 0); err != nil {
				return &hint.Error{Err: fmt.Errorf("enabling the io controller in %s: %w", d, err),
					Advice: "a cgroup v2 parent with processes in it cannot delegate controllers; run iolens where the io controller can be enabled (e.g. a host shell), or use --cgroup v1"}
			}
		}
	}
	if err := os.Mkdir(c.Dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("creating cgroup %s: %w", c.Dir, err)
	}
	return nil
}

func readString(p string) string { b, _ := os.ReadFile(p); return string(b) }

func rate(v float64) uint64 {
	if v <= 0 {
		return 0
	}
	return uint64(math.Max(1, math.Round(v)))
}

// set writes the limits for device majmin ("7:3").
func (c cgroup) set(majmin string, l Limits) error {
	if c.Version == 2 {
		f := func(k string, v float64) string {
			if r := rate(v); r > 0 {
				return fmt.Sprintf("%s=%d", k, r)
			}
			return k + "=max"
		}
		line := strings.Join([]string{majmin, f("rbps", l.ReadBPS), f("wbps", l.WriteBPS), f("riops", l.ReadIOPS), f("wiops", l.WriteIOPS)}, " ")
		if err := os.WriteFile(filepath.Join(c.Dir, "io.max"), []byte(line), 0); err != nil {
			return fmt.Errorf("setting io.max: %w", err)
		}
		return nil
	}
	for _, kv := range []struct {
		file string
		v    float64
	}{{"read_bps_device", l.ReadBPS}, {"write_bps_device", l.WriteBPS}, {"read_iops_device", l.ReadIOPS}, {"write_iops_device", l.WriteIOPS}} {
		line := fmt.Sprintf("%s %d", majmin, rate(kv.v))
		if err := os.WriteFile(filepath.Join(c.Dir, "blkio.throttle."+kv.file), []byte(line), 0); err != nil {
			return fmt.Errorf("setting blkio.throttle.%s: %w", kv.file, err)
		}
	}
	return nil
}

// procs lists the processes in the cgroup (none if it does not exist).
func (c cgroup) procs() ([]int, error) {
	b, err := os.ReadFile(c.procsFile())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out, nil
}

// remove deletes the cgroup, and the shared parent once it is empty.
func (c cgroup) remove() error {
	if err := os.Remove(c.Dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing cgroup %s: %w", c.Dir, err)
	}
	_ = os.Remove(filepath.Dir(c.Dir)) // fails while other disks use it
	return nil
}

func (c cgroup) exists() bool {
	_, err := os.Stat(c.Dir)
	return err == nil
}
