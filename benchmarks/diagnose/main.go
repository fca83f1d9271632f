// Command diagnose measures iolens diagnose on emulated disks whose truth
// is known: how long it takes against the fixed suites, how close its
// ceilings are to the configured caps, how many of its limit codes are
// right, and how soon its etcd verdict is certain against the size-based
// etcd suite. It runs the built binary as a user would. Needs root; run it
// under 'flock /' so no other real-IO work overlaps.
//
//	make build && flock / go run ./benchmarks/diagnose -iolens bin/iolens
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/result"
)

// scenario is an emulated disk and what diagnose should find on it.
type scenario struct {
	name string
	args []string // iolens emulate create flags
	// caps: direction -> "iops"/"bw" -> configured figure
	readIOPS, writeIOPS, readBW, writeBW float64
	// codes: test name -> direction -> the limit code that is right
	codes map[string]map[string]string
	// burst: a cliff must be found; stalls: a stall must be found
	burst, stalls bool
	// etcd: the verdict that is right ("" to skip)
	etcd string
	// suites: also time these 'iolens run' suites on the same disk
	suites [][]string
	// headline: direction -> "iops"/"bw" -> the limit code that is right
	// for the verdict's figure
	headline map[string]map[string]string
	// host: diagnose a directory on the host's own disk instead (truth
	// unknown: every headline figure must name a limit or say why not)
	host bool
}

// latencyTo32: the figure is latency-bound, or its knee lies past QD32.
const latencyTo32 = "latency up to QD32 at least"

func capCodes(qd1Cap bool) map[string]map[string]string {
	qd1 := result.CodeLatency
	if qd1Cap {
		qd1 = result.CodeIOPSCap
	}
	return map[string]map[string]string{
		"randread-4k-qd32":  {"read": result.CodeIOPSCap},
		"randwrite-4k-qd32": {"write": result.CodeIOPSCap},
		"read-1m-qd8":       {"read": result.CodeBandwidthCap},
		"write-1m-qd8":      {"write": result.CodeBandwidthCap},
		"randread-4k-qd1":   {"read": qd1},
	}
}

func scenarios() []scenario {
	return []scenario{
		{name: "static", args: []string{"--iops", "3000", "--bw", "80MB/s"}, readIOPS: 3000, writeIOPS: 3000, readBW: 80e6, writeBW: 80e6,
			codes: capCodes(true), etcd: "pass",
			suites: [][]string{{"--suite", "standard"}, {"--suite", "standard", "--until-steady", "--min-runtime", "20"}, {"--suite", "quick"}}},
		{name: "burst", args: []string{"--iops", "300", "--burst-iops", "3000", "--burst-seconds", "8"}, burst: true,
			readIOPS: 300, writeIOPS: 300},
		{name: "write-cache", args: []string{"--profile", "azure:P4", "--cache", "readwrite", "--scale", "40"}, stalls: true},
		{name: "latency", args: []string{"--iops", "5000", "--latency", "2ms"}, readIOPS: 5000, writeIOPS: 5000,
			codes: map[string]map[string]string{"randread-4k-qd1": {"read": result.CodeLatency}, "randread-4k-qd32": {"read": result.CodeIOPSCap}}},
		{name: "slow-fsync", args: []string{"--write-iops", "60"}, etcd: "fail", suites: [][]string{{"--suite", "etcd"}}},
		// Disks whose kind the rules were not tuned on.
		{name: "network", args: []string{"--latency", "p50=3ms,p99=5ms"},
			codes: map[string]map[string]string{"randread-4k-qd1": {"read": result.CodeLatency}, "randread-4k-qd32": {"read": result.CodeLatency}},
			// Latency-bound to QD32 at least; past it the emulator's own
			// layer may saturate on a small host (a knee past QD32).
			headline: map[string]map[string]string{"read": {"iops": latencyTo32}}},
		{name: "channels", args: []string{"--channels", "4", "--latency", "p50=2ms,p99=6ms"},
			codes:    map[string]map[string]string{"randread-4k-qd1": {"read": result.CodeLatency}, "randread-4k-qd32": {"read": result.CodeDevice}},
			headline: map[string]map[string]string{"read": {"iops": result.CodeDevice}, "write": {"iops": result.CodeDevice}}},
		{name: "in-device", args: []string{"--throttle-at", "device", "--iops", "2500", "--bw", "100MB/s", "--latency", "p50=0.5ms,p99=2ms"},
			readIOPS: 2500, writeIOPS: 2500, readBW: 100e6, writeBW: 100e6, codes: capCodes(false),
			headline: map[string]map[string]string{"read": {"iops": result.CodeIOPSCap, "bw": result.CodeBandwidthCap},
				"write": {"iops": result.CodeIOPSCap, "bw": result.CodeBandwidthCap}}},
		{name: "ram", args: []string{"--ram", "--size", "2G"},
			headline: map[string]map[string]string{"read": {"iops": result.CodeCPU}}},
		{name: "host", host: true},
	}
}

var (
	bin      = flag.String("iolens", "bin/iolens", "iolens binary")
	stateDir = flag.String("state-dir", "/var/tmp/iolens-bench-diagnose", "state root for the emulated disks (removed afterwards)")
	only     = flag.String("only", "", "run only these scenarios (comma-separated)")
	noSuites = flag.Bool("no-suites", false, "skip the fixed suites (diagnose only)")
	budget   = flag.String("budget", "3m", "diagnose --budget")
)

func main() {
	flag.Parse()
	if os.Geteuid() != 0 {
		fail(fmt.Errorf("needs root (emulated disks)"))
	}
	b, err := filepath.Abs(*bin)
	if err != nil {
		fail(err)
	}
	*bin = b
	os.Setenv("IOLENS_EMULATE_DIR", *stateDir)
	os.Setenv("IOLENS_NO_METADATA", "1")
	_, existed := os.Stat(*stateDir)
	defer func() {
		_ = exec.Command(*bin, "emulate", "rm", "--all", "--force").Run()
		if existed != nil {
			_ = os.Remove(*stateDir) // what the emulator created for us, once empty
		}
	}()
	var rows, timing, codes, heads []string
	right, total, hRight, hTotal, contra := 0, 0, 0, 0, 0
	for _, sc := range scenarios() {
		if *only != "" && !strings.Contains(","+*only+",", ","+sc.name+",") {
			continue
		}
		target := []string{"--emulated", "bench-" + sc.name}
		if sc.host {
			dir, err := os.MkdirTemp("/var/tmp", "iolens-bench-host-")
			if err != nil {
				fail(err)
			}
			defer os.RemoveAll(dir)
			target = []string{dir}
			fmt.Fprintf(os.Stderr, "== %s: %s on the host's own disk\n", sc.name, dir)
		} else {
			fmt.Fprintf(os.Stderr, "== %s: iolens emulate create %s\n", sc.name, strings.Join(sc.args, " "))
			if out, err := run(append([]string{"emulate", "create", "bench-" + sc.name}, sc.args...)...); err != nil {
				fmt.Fprintf(os.Stderr, "   skipped: %v: %s\n", err, firstLine(out))
				rows = append(rows, fmt.Sprintf("| %s | skipped: the emulator refused `%s` (%s) |", sc.name, strings.Join(sc.args, " "), firstLine(out)))
				continue
			}
		}
		t0 := time.Now()
		out, err := run(append(append([]string{"diagnose"}, target...), "--budget", *budget, "--no-save", "-q", "-o", "json")...)
		took := time.Since(t0)
		if err != nil {
			fail(fmt.Errorf("%s: diagnose: %v: %s", sc.name, err, out))
		}
		var d diagnosis.Diagnosis
		if err := json.Unmarshal(out, &d); err != nil {
			fail(fmt.Errorf("%s: diagnose output: %v", sc.name, err))
		}
		timing = append(timing, fmt.Sprintf("| %s | diagnose --budget %s | %.0f s | 1.00 |", sc.name, *budget, took.Seconds()))
		rows = append(rows, caps(sc, d)...)
		r, n, lines := checkCodes(sc, d)
		right, total = right+r, total+n
		codes = append(codes, lines...)
		r, n, lines = checkHeadline(sc, d)
		hRight, hTotal = hRight+r, hTotal+n
		heads = append(heads, lines...)
		c, lines := contradictions(sc, d)
		contra += c
		heads = append(heads, lines...)
		rows = append(rows, events(sc, d)...)
		if sc.etcd != "" {
			rows = append(rows, etcdRow(sc, d))
		}
		if !*noSuites {
			for _, s := range sc.suites {
				t1 := time.Now()
				so, err := run(append([]string{"run", "--emulated", "bench-" + sc.name, "--no-save", "-q", "-o", "json"}, s...)...)
				st := time.Since(t1)
				if err != nil {
					fmt.Fprintf(os.Stderr, "   run %s: %v\n", strings.Join(s, " "), err)
					continue
				}
				timing = append(timing, fmt.Sprintf("| %s | run %s | %.0f s | %.2f |", sc.name, strings.Join(s, " "), st.Seconds(), st.Seconds()/took.Seconds()))
				if sc.name == "slow-fsync" {
					rows = append(rows, suiteEtcdRow(so, st))
				}
			}
		}
		_, _ = run("emulate", "rm", "bench-"+sc.name)
	}
	fmt.Printf("Measured %s on %s.\n\n", time.Now().UTC().Format("2006-01-02"), hostLine())
	fmt.Println("| scenario | command | wall time | ratio to diagnose |")
	fmt.Println("|---|---|---:|---:|")
	for _, t := range timing {
		fmt.Println(t)
	}
	fmt.Println()
	fmt.Println("| scenario | figure | configured | diagnose | ratio |")
	fmt.Println("|---|---|---:|---:|---:|")
	for _, r := range rows {
		fmt.Println(r)
	}
	fmt.Println()
	fmt.Printf("Headline limits right: %d of %d; headlines that contradict a finding: %d\n\n", hRight, hTotal, contra)
	fmt.Println("| scenario | figure | want | got | the verdict's line |")
	fmt.Println("|---|---|---|---|---|")
	for _, h := range heads {
		fmt.Println(h)
	}
	fmt.Println()
	fmt.Printf("Limit codes right: %d of %d\n\n", right, total)
	fmt.Println("| scenario | test | dir | want | got |")
	fmt.Println("|---|---|---|---|---|")
	for _, c := range codes {
		fmt.Println(c)
	}
}

func caps(sc scenario, d diagnosis.Diagnosis) []string {
	var out []string
	row := func(fig string, want, got float64) {
		if want <= 0 {
			return
		}
		out = append(out, fmt.Sprintf("| %s | %s | %.4g | %.4g | %.3f |", sc.name, fig, want, got, got/want))
	}
	if r := d.Disk.Read; r != nil {
		row("read IOPS", sc.readIOPS, r.IOPS)
		row("read B/s", sc.readBW, r.BWBytes)
	}
	if w := d.Disk.Write; w != nil {
		row("write IOPS", sc.writeIOPS, w.IOPS)
		row("write B/s", sc.writeBW, w.BWBytes)
	}
	return out
}

func checkCodes(sc scenario, d diagnosis.Diagnosis) (right, total int, lines []string) {
	names := make([]string, 0, len(sc.codes))
	for n := range sc.codes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, test := range names {
		for dir, want := range sc.codes[test] {
			got := "(none)"
			for _, l := range d.Limits {
				if l.Test == test && l.Dir == dir {
					got = l.Code
				}
			}
			total++
			if got == want {
				right++
			}
			lines = append(lines, fmt.Sprintf("| %s | %s | %s | %s | %s |", sc.name, test, dir, want, got))
		}
	}
	return
}

// checkHeadline compares each verdict figure's limit with the truth; on
// the host, where the truth is unknown, a figure is right when it names a
// limit, or says why it cannot.
func checkHeadline(sc scenario, d diagnosis.Diagnosis) (right, total int, lines []string) {
	for _, dir := range []string{"read", "write"} {
		x := d.Disk.Read
		if dir == "write" {
			x = d.Disk.Write
		}
		if x == nil {
			continue
		}
		for _, fig := range []struct{ name, code, why string }{{"iops", x.IOPSLimit, x.IOPSWhy}, {"bw", x.BWLimit, x.BWWhy}} {
			if fig.code == "" {
				continue
			}
			want, ok := sc.headline[dir][fig.name]
			switch {
			case sc.host:
				want = "a limit, or unknown with why"
				ok = true
			case !ok:
				continue
			}
			good := fig.code == want || sc.host && (fig.code != result.CodeUnknown || fig.why != "") ||
				want == latencyTo32 && (fig.code == result.CodeLatency || x.KneeQD > 32)
			total++
			if good {
				right++
			}
			lines = append(lines, fmt.Sprintf("| %s | %s %s | %s | %s | %s |", sc.name, dir, fig.name, want, fig.code, verdictLine(d, dir)))
		}
	}
	return
}

func verdictLine(d diagnosis.Diagnosis, dir string) string {
	for _, l := range d.Verdict {
		if strings.HasPrefix(l, dir+":") {
			return strings.ReplaceAll(strings.TrimSpace(strings.TrimPrefix(l, dir+":")), "|", "/")
		}
	}
	return ""
}

// contradictions counts verdict figures whose limit differs from the limit
// finding of the test the figure was measured by.
func contradictions(sc scenario, d diagnosis.Diagnosis) (n int, lines []string) {
	for _, dir := range []string{"read", "write"} {
		x := d.Disk.Read
		if dir == "write" {
			x = d.Disk.Write
		}
		if x == nil {
			continue
		}
		for _, fig := range []struct {
			code  string
			qd    int
			large bool
		}{{x.IOPSLimit, x.IOPSQD, false}, {x.BWLimit, x.BWQD, true}} {
			if fig.code == "" {
				continue
			}
			for _, r := range d.Results {
				dd := r.Dir(dir)
				if dd == nil || r.Status != "ok" || !r.Test.Direct || r.Test.Fdatasync > 0 || (r.Test.BlockSize >= 64<<10) != fig.large ||
					r.Test.IODepth*max(1, r.Test.NumJobs) != fig.qd || r.Test.Group == result.GroupBurstCheck || r.Test.Group == result.GroupLayout {
					continue
				}
				for _, f := range r.Findings {
					if f.Kind == result.KindLimit && f.Dir == dir && f.Code != fig.code {
						n++
						lines = append(lines, fmt.Sprintf("| %s | contradiction | %s | %s says %s | |", sc.name, fig.code, r.Test.Name, f.Code))
					}
				}
			}
		}
	}
	return
}

func events(sc scenario, d diagnosis.Diagnosis) []string {
	var out []string
	if sc.burst {
		got := "none"
		if b := d.Disk.Burst; b != nil {
			got = fmt.Sprintf("%.0f then %.0f %s after %.0f s", b.Rate, b.Baseline, b.Unit, b.DurationS)
		}
		out = append(out, fmt.Sprintf("| %s | burst found | yes | %s | |", sc.name, got))
	}
	if sc.stalls {
		out = append(out, fmt.Sprintf("| %s | stalls found | yes | %d | |", sc.name, len(d.Disk.Stalls)))
	}
	if !sc.burst && !sc.stalls && (d.Disk.Burst != nil || len(d.Disk.Stalls) > 0) {
		out = append(out, fmt.Sprintf("| %s | burst or stall | none | %v, %d stalls | |", sc.name, d.Disk.Burst != nil, len(d.Disk.Stalls)))
	}
	return out
}

func etcdRow(sc scenario, d diagnosis.Diagnosis) string {
	got, syncs, secs := "none", uint64(0), 0.0
	if f := d.Disk.Fsync; f != nil {
		got, syncs = f.Etcd, f.Syncs
	}
	for _, r := range d.Results {
		if r.Sync != nil {
			secs = float64(max(r.Write.RuntimeMs, 0)) / 1000
		}
	}
	return fmt.Sprintf("| %s | etcd verdict (diagnose) | %s | %s after %d syncs, %.1f s | |", sc.name, sc.etcd, got, syncs, secs)
}

func suiteEtcdRow(out []byte, took time.Duration) string {
	var rs []result.Result
	if err := json.Unmarshal(out, &rs); err != nil || len(rs) == 0 || rs[0].Sync == nil {
		return "| slow-fsync | etcd verdict (run --suite etcd) | fail | unreadable | |"
	}
	return fmt.Sprintf("| slow-fsync | etcd verdict (run --suite etcd) | fail | p99 %.1f ms after %d syncs, %.1f s of fio (%.0f s wall) | |",
		rs[0].Sync.Lat.P99Ns/1e6, rs[0].Sync.Lat.N, float64(rs[0].Write.RuntimeMs)/1000, took.Seconds())
}

func run(args ...string) ([]byte, error) {
	var out, errb bytes.Buffer
	cmd := exec.Command(*bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return append(out.Bytes(), errb.Bytes()...), err
	}
	return out.Bytes(), nil
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func hostLine() string {
	k, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return fmt.Sprintf("kernel %s, %d CPUs, emulated disks on loop devices", strings.TrimSpace(string(k)), numCPU())
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return int(math.Max(1, float64(strings.Count(string(b), "processor\t:"))))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "diagnose bench:", err)
	os.Exit(1)
}
