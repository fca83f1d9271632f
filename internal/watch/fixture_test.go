package watch

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

// tree is a fixture /proc and /sys with running counters.
type tree struct {
	t           testing.TB
	proc, sys   string
	devs        []string
	mm          map[string]string
	counters    map[string]*[11]uint64 // r_ios r_sect r_ticks w_ios w_sect w_ticks inflight io_ticks weighted
	cpuTotal    uint64
	cpuIowait   uint64
	psiTotal    uint64
	dirty, wbkB uint64
}

func newTree(t testing.TB, devs ...string) *tree {
	t.Helper()
	root := t.TempDir()
	tr := &tree{t: t, proc: filepath.Join(root, "proc"), sys: filepath.Join(root, "sys"), devs: devs,
		mm: map[string]string{}, counters: map[string]*[11]uint64{}}
	for i, d := range devs {
		mm := fmt.Sprintf("253:%d", i*16)
		tr.mm[d] = mm
		tr.counters[d] = &[11]uint64{}
		dir := filepath.Join(tr.sys, "devices/virtual/block", d)
		tr.write(filepath.Join(dir, "dev"), mm+"\n")
		tr.write(filepath.Join(dir, "queue/rotational"), "0\n")
		tr.link("../../devices/virtual/block/"+d, filepath.Join(tr.sys, "class/block", d))
		tr.link("../../devices/virtual/block/"+d, filepath.Join(tr.sys, "dev/block", mm))
		tr.link("../devices/virtual/block/"+d, filepath.Join(tr.sys, "block", d))
	}
	tr.flush()
	return tr
}

func (tr *tree) write(p, s string) {
	tr.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *tree) link(target, p string) {
	tr.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		tr.t.Fatal(err)
	}
}

// flush writes the counters as the kernel would show them.
func (tr *tree) flush() {
	var b strings.Builder
	for _, d := range tr.devs {
		c := tr.counters[d]
		maj, min, _ := strings.Cut(tr.mm[d], ":")
		// major minor name r_ios r_merges r_sect r_ticks w_ios w_merges
		// w_sect w_ticks in_flight io_ticks weighted_ticks
		fmt.Fprintf(&b, "%4s %7s %s %d 0 %d %d %d 0 %d %d %d %d %d 0 0 0 0\n", maj, min, d,
			c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8])
	}
	tr.write(filepath.Join(tr.proc, "diskstats"), b.String())
	// USER_HZ is 100: one CPU gives 100 ticks a second.
	tr.write(filepath.Join(tr.proc, "stat"), fmt.Sprintf("cpu  %d 0 0 0 %d 0 0 0 0 0\nbtime 1\n", tr.cpuTotal-tr.cpuIowait, tr.cpuIowait))
	tr.write(filepath.Join(tr.proc, "meminfo"), fmt.Sprintf("MemTotal: 8000000 kB\nDirty: %d kB\nWriteback: %d kB\n", tr.dirty, tr.wbkB))
	tr.write(filepath.Join(tr.proc, "pressure/io"), fmt.Sprintf("some avg10=0.00 avg60=0.00 avg300=0.00 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", tr.psiTotal))
}

// interval is one line of a sequence file.
type interval struct {
	n      int
	dev    string
	deltas [9]uint64
	host   [4]uint64 // iowait %, writeback kB, dirty kB, psi us
	want   string
}

func readSeq(t *testing.T, name string) []interval {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata/sequences", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []interval
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		parts := strings.Split(line, "|")
		if len(parts) != 3 {
			t.Fatalf("%s: bad line %q", name, line)
		}
		dev := strings.Fields(parts[0])
		host := strings.Fields(parts[1])
		var iv interval
		iv.n, _ = strconv.Atoi(strings.TrimPrefix(dev[0], "@"))
		iv.dev = dev[1]
		for i, s := range dev[2:] {
			iv.deltas[i], _ = strconv.ParseUint(s, 10, 64)
		}
		for i, s := range host {
			iv.host[i], _ = strconv.ParseUint(s, 10, 64)
		}
		iv.want = strings.TrimSpace(parts[2])
		out = append(out, iv)
	}
	return out
}

// replay feeds a sequence to a watcher, one tick per interval, and
// returns every record with the state each device was in.
func replay(t *testing.T, name string, cfg Config) (got map[int]map[string]string, want map[int]map[string]string, recs []result.WatchRecord) {
	t.Helper()
	seq := readSeq(t, name)
	var devs []string
	for _, iv := range seq {
		if !contains(devs, iv.dev) {
			devs = append(devs, iv.dev)
		}
	}
	tr := newTree(t, devs...)
	if cfg.Devices == nil {
		cfg.Devices = devs
	}
	cfg.ProcRoot, cfg.SysRoot, cfg.Host = tr.proc, tr.sys, "fixture"
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st, err := w.Start(t0)
	if err != nil {
		t.Fatal(err)
	}
	recs = append(recs, st)
	got, want = map[int]map[string]string{}, map[int]map[string]string{}
	last := 0
	var byN [][]interval
	for _, iv := range seq {
		if iv.n != last {
			byN = append(byN, nil)
			last = iv.n
		}
		byN[len(byN)-1] = append(byN[len(byN)-1], iv)
	}
	for _, group := range byN {
		n := group[0].n
		want[n] = map[string]string{}
		for _, iv := range group {
			c := tr.counters[iv.dev]
			d := iv.deltas
			c[0] += d[0]
			c[3] += d[1]
			c[1] += d[2]
			c[4] += d[3]
			c[2] += d[4]
			c[5] += d[5]
			c[7] += d[6]
			c[8] += d[7]
			c[6] = d[8]
			want[n][iv.dev] = iv.want
			h := iv.host
			tr.cpuIowait += h[0]
			tr.cpuTotal += 100
			tr.wbkB, tr.dirty = h[1], h[2]
			tr.psiTotal += h[3]
		}
		tr.flush()
		rs, err := w.Tick(t0.Add(time.Duration(n) * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		got[n] = map[string]string{}
		for _, d := range rs[0].Devices {
			got[n][d.Device] = d.State
		}
		recs = append(recs, rs...)
	}
	recs = append(recs, w.Flush(t0.Add(time.Duration(last)*time.Second))...)
	return got, want, recs
}

// findings lists the findings as "kind phase start+duration".
func findings(recs []result.WatchRecord) []string {
	var out []string
	for _, r := range recs {
		if r.Type != result.WatchTypeFinding {
			continue
		}
		f := r.Finding
		s := fmt.Sprintf("%s %s %s @%g", f.Device, f.Kind, f.Phase, *f.StartS)
		if f.DurationS != nil {
			s += fmt.Sprintf("+%g", *f.DurationS)
		}
		out = append(out, strings.TrimSpace(s))
	}
	return out
}
