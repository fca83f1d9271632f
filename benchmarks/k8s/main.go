// Command k8s measures what 'iolens k8s run' costs on a real cluster of
// two nodes (the e2e cluster: run it through benchmarks/k8s/run.sh, which
// starts and stops one):
//
//   - wall time and overhead per target (wall time minus the fio runtime,
//     spread over the targets) for 1, 4 and 8 PVCs per node on every node at
//     once (--all-nodes --volumes-per-node N --parallel);
//   - the start skew: how far apart the targets began their first test, by
//     the agents' clocks as the run reports it, and between the nodes by
//     the results' own end times;
//   - in-pod against host IOPS per node: the same job through 'iolens k8s
//     run' (in the pod, on the node's local-path volume) and 'iolens run'
//     on the host in the same file system, in a blkio cgroup with the same
//     cap as the node's containers get (none on e2e-node), from alternating
//     pairs.
//
// Medians of -reps runs, all taken in the same invocation.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/result"
)

// node is one node of the cluster, as the benchmark needs it.
type node struct {
	name string
	// dir is a host directory in the file system of the node's local-path
	// volumes; capDev and capIOPS the blkio cap its containers get
	// ("" and 0 for none).
	dir     string
	capDev  string
	capIOPS int
}

func main() {
	iolens := flag.String("iolens", "bin/iolens", "iolens binary")
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster")
	namespace := flag.String("n", "iolens", "namespace")
	class := flag.String("storage-class", "local-path", "storage class")
	state := flag.String("state", "/var/tmp/iolens-e2e", "state directory of the e2e cluster (for the nodes' file systems and caps)")
	perNodeFlag := flag.String("per-node", "1,4,8", "PVCs per node, comma-separated")
	reps := flag.Int("reps", 3, "repetitions of each case")
	runtime := flag.Int("runtime", 5, "fio runtime per test, seconds")
	flag.Parse()
	b := &bencher{iolens: *iolens, kubeconfig: *kubeconfig, ns: *namespace, class: *class, runtime: *runtime}
	nodes, err := clusterNodes(*state)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchmarks/k8s:", err)
		os.Exit(1)
	}
	var counts []int
	for _, s := range strings.Split(*perNodeFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "benchmarks/k8s: -per-node %q\n", *perNodeFlag)
			os.Exit(2)
		}
		counts = append(counts, n)
	}
	if err := b.run(nodes, counts, *reps); err != nil {
		fmt.Fprintln(os.Stderr, "benchmarks/k8s:", err)
		os.Exit(1)
	}
}

// clusterNodes reads the e2e cluster's layout (test/e2e/cluster.sh): node 1
// keeps local-path in state/pv/a, node N in state/nN/pv/a; a node's cap is
// in its blkio-cap file ("MAJ:MIN IOPS") when it is on local-path's device.
func clusterNodes(state string) ([]node, error) {
	b, err := os.ReadFile(filepath.Join(state, "nodes"))
	if err != nil {
		return nil, fmt.Errorf("no e2e cluster in %s: %w", state, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	var out []node
	for i := 1; i <= n; i++ {
		nd := node{name: "e2e-node", dir: filepath.Join(state, "pv", "a")}
		capFile := ""
		if i > 1 {
			nd.name = fmt.Sprintf("e2e-node-%d", i)
			nd.dir = filepath.Join(state, fmt.Sprintf("n%d", i), "pv", "a")
			// Every volume of the other nodes is on the capped device.
			capFile = filepath.Join(state, fmt.Sprintf("n%d", i), "blkio-cap")
		}
		if capFile != "" {
			if c, err := os.ReadFile(capFile); err == nil {
				f := strings.Fields(string(c))
				if len(f) == 2 {
					nd.capDev = f[0]
					nd.capIOPS, _ = strconv.Atoi(f[1])
				}
			}
		}
		out = append(out, nd)
	}
	return out, nil
}

type bencher struct {
	iolens, kubeconfig, ns, class string
	runtime                       int
	job                           string
}

// one is the outcome of one 'iolens k8s run'.
type one struct {
	wall, firstResult, cleanup time.Duration
	// skew is what the run reports (agents' clocks, when each agent began
	// its first test); fioSkew is how far apart fio's IO began in all
	// targets, and nodeSkew in the first target of each node, by fio's
	// timestamps.
	skew, fioSkew, nodeSkew time.Duration
	results                 []result.Result
}

var (
	summaryRE = regexp.MustCompile(`first result ([0-9.]+)s after start; cleanup done ([0-9.]+)s after the last result`)
	skewRE    = regexp.MustCompile(`start skew ([0-9.]+)s across the (\d+) targets`)
)

func (b *bencher) k8sRun(perNode, nodes int) (one, error) {
	args := []string{"k8s", "--kubeconfig", b.kubeconfig, "run", "-n", b.ns, "--storage-class", b.class, "--pvc-size", "1Gi",
		"--job", b.job, "-o", "ndjson", "--no-save", "--all-nodes", "--volumes-per-node", strconv.Itoa(perNode), "--parallel"}
	cmd := exec.Command(b.iolens, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return one{}, fmt.Errorf("iolens k8s run: %v\n%s", err, errb.String())
	}
	o := one{wall: time.Since(start)}
	m := summaryRE.FindStringSubmatch(errb.String())
	if m == nil {
		return o, fmt.Errorf("no timing summary in:\n%s", errb.String())
	}
	o.firstResult, o.cleanup = secs(m[1]), secs(m[2])
	if m := skewRE.FindStringSubmatch(errb.String()); m != nil {
		o.skew = secs(m[1])
	}
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r result.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return o, err
		}
		o.results = append(o.results, r)
	}
	if len(o.results) != perNode*nodes {
		return o, fmt.Errorf("%d results, want %d", len(o.results), perNode*nodes)
	}
	// When fio's IO began, by fio's own clock: the time it wrote its
	// output less the job's runtime (the result's start is taken before
	// the agent waits at the gate, and its end after the processing).
	first := map[string]time.Time{}
	var all []time.Time
	for _, r := range o.results {
		io, err := ioStart(r)
		if err != nil {
			return o, err
		}
		all = append(all, io)
		n := r.Target.Labels["k8s.node"]
		if t, ok := first[n]; !ok || io.Before(t) {
			first[n] = io
		}
	}
	var firsts []time.Time
	for _, t := range first {
		firsts = append(firsts, t)
	}
	o.nodeSkew, o.fioSkew = spread(firsts), spread(all)
	return o, nil
}

// ioStart is when a test's IO began, from fio's JSON.
func ioStart(r result.Result) (time.Time, error) {
	var f struct {
		TimestampMs int64 `json:"timestamp_ms"`
		Jobs        []struct {
			JobRuntime int64 `json:"job_runtime"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(r.FioJSON, &f); err != nil || f.TimestampMs == 0 || len(f.Jobs) == 0 {
		return time.Time{}, fmt.Errorf("result %s: no fio timestamps (%v)", r.Target.Labels["k8s.target"], err)
	}
	longest := int64(0)
	for _, j := range f.Jobs {
		longest = max(longest, j.JobRuntime)
	}
	return time.UnixMilli(f.TimestampMs - longest), nil
}

func spread(ts []time.Time) time.Duration {
	var lo, hi time.Time
	for _, t := range ts {
		if lo.IsZero() || t.Before(lo) {
			lo = t
		}
		if t.After(hi) {
			hi = t
		}
	}
	return hi.Sub(lo)
}

func secs(s string) time.Duration {
	f, _ := strconv.ParseFloat(s, 64)
	return time.Duration(f * float64(time.Second))
}

// hostRun runs the job with 'iolens run' on the host in dir, in a blkio
// cgroup that caps capDev at capIOPS as the node's containers are (none
// when capIOPS is 0), and returns its read IOPS.
func (b *bencher) hostRun(dir, capDev string, capIOPS int) (float64, error) {
	args := []string{b.iolens, "run", "--job", b.job, "-o", "ndjson", "--no-save", "-q", dir}
	var cmd *exec.Cmd
	if capIOPS > 0 {
		cg := filepath.Join("/sys/fs/cgroup/blkio", fmt.Sprintf("iolens-bench-k8s-%d", os.Getpid()))
		if err := os.Mkdir(cg, 0o755); err != nil {
			return 0, err
		}
		defer os.Remove(cg)
		for _, f := range []string{"blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device"} {
			if err := os.WriteFile(filepath.Join(cg, f), []byte(fmt.Sprintf("%s %d", capDev, capIOPS)), 0o644); err != nil {
				return 0, err
			}
		}
		// The shell joins the cgroup, then becomes iolens: fio inherits it.
		cmd = exec.Command("sh", append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, cg}, args...)...)
	} else {
		cmd = exec.Command(args[0], args[1:]...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("iolens run: %v\n%s", err, errb.String())
	}
	var r result.Result
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &r); err != nil {
		return 0, err
	}
	return readIOPS(r), nil
}

func readIOPS(r result.Result) float64 {
	if r.Read == nil {
		return 0
	}
	return r.Read.IOPS
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func (b *bencher) run(nodes []node, counts []int, reps int) error {
	tmp, err := os.MkdirTemp("", "iolens-bench-k8s-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	b.job = filepath.Join(tmp, "randread.fio")
	job := fmt.Sprintf("[global]\nioengine=libaio\ndirect=1\ntime_based=1\nruntime=%d\nsize=64m\n\n[randread-4k-qd16]\nrw=randread\nbs=4k\niodepth=16\n", b.runtime)
	if err := os.WriteFile(b.job, []byte(job), 0o644); err != nil {
		return err
	}
	rt := time.Duration(b.runtime) * time.Second
	fmt.Printf("iolens k8s run --all-nodes --parallel, %d nodes, class %s, fio randread 4k QD16 %ds on 64 MiB, medians of %d\n\n",
		len(nodes), b.class, b.runtime, reps)

	type stats struct{ wall, first, clean, skew, fioSkew, nodeSkew []float64 }
	st := map[int]*stats{}
	pod := map[string][]float64{}
	host := map[string][]float64{}
	ratio := map[string][]float64{}
	for i := 0; i < reps; i++ {
		// The cases take turns, so that a slow spell of the machine does
		// not fall on one of them only.
		for _, n := range counts {
			o, err := b.k8sRun(n, len(nodes))
			if err != nil {
				return err
			}
			s := st[n]
			if s == nil {
				s = &stats{}
				st[n] = s
			}
			s.wall = append(s.wall, o.wall.Seconds())
			s.first = append(s.first, o.firstResult.Seconds())
			s.clean = append(s.clean, o.cleanup.Seconds())
			s.skew = append(s.skew, o.skew.Seconds()*1000)
			s.nodeSkew = append(s.nodeSkew, o.nodeSkew.Seconds()*1000)
			s.fioSkew = append(s.fioSkew, o.fioSkew.Seconds()*1000)
			if n != 1 {
				continue
			}
			// In-pod against host, per node, alternating.
			for _, r := range o.results {
				name := r.Target.Labels["k8s.node"]
				for _, nd := range nodes {
					if nd.name != name {
						continue
					}
					d := filepath.Join(nd.dir, fmt.Sprintf("iolens-bench-%d", i))
					if err := os.MkdirAll(d, 0o755); err != nil {
						return err
					}
					h, err := b.hostRun(d, nd.capDev, nd.capIOPS)
					os.RemoveAll(d)
					if err != nil {
						return err
					}
					pod[name] = append(pod[name], readIOPS(r))
					host[name] = append(host[name], h)
					ratio[name] = append(ratio[name], readIOPS(r)/h)
				}
			}
		}
	}
	fmt.Printf("%-34s", "PVCs per node (targets)")
	for _, n := range counts {
		fmt.Printf(" %12s", fmt.Sprintf("%d (%d)", n, n*len(nodes)))
	}
	fmt.Println()
	row := func(name string, f func(n int) string) {
		fmt.Printf("%-34s", name)
		for _, n := range counts {
			fmt.Printf(" %12s", f(n))
		}
		fmt.Println()
	}
	row("wall time", func(n int) string { return fmt.Sprintf("%.1fs", median(st[n].wall)) })
	row("start to first result", func(n int) string { return fmt.Sprintf("%.1fs", median(st[n].first)) })
	row("last result to cleanup done", func(n int) string { return fmt.Sprintf("%.1fs", median(st[n].clean)) })
	row("overhead (wall - fio time)", func(n int) string { return fmt.Sprintf("%.1fs", median(st[n].wall)-rt.Seconds()) })
	row("overhead per target", func(n int) string {
		return fmt.Sprintf("%.2fs", (median(st[n].wall)-rt.Seconds())/float64(n*len(nodes)))
	})
	row("start skew, all targets (agents)", func(n int) string { return fmt.Sprintf("%.0fms", median(st[n].skew)) })
	row("start skew, all targets (fio IO)", func(n int) string { return fmt.Sprintf("%.0fms", median(st[n].fioSkew)) })
	row("start skew between nodes (fio IO)", func(n int) string { return fmt.Sprintf("%.0fms", median(st[n].nodeSkew)) })
	fmt.Printf("\nper run (wall s; skew ms: agents, fio all, fio between nodes):\n")
	for _, n := range counts {
		fmt.Printf("  %d per node: %s; %s; %s; %s\n", n, fmtList(st[n].wall, 1), fmtList(st[n].skew, 0), fmtList(st[n].fioSkew, 0), fmtList(st[n].nodeSkew, 0))
	}
	fmt.Printf("\nin-pod vs 'iolens run' on the host, same file system and cap, %d alternating pairs per node:\n", reps)
	for _, nd := range nodes {
		capNote := "no cap"
		if nd.capIOPS > 0 {
			capNote = fmt.Sprintf("cap %d IOPS", nd.capIOPS)
		}
		fmt.Printf("  %-11s (%s): in-pod %.0f IOPS, host %.0f IOPS; median ratio in-pod/host %.3f (pairs: %s)\n",
			nd.name, capNote, median(pod[nd.name]), median(host[nd.name]), median(ratio[nd.name]), fmtList(ratio[nd.name], 3))
	}
	return nil
}

func fmtList(xs []float64, prec int) string {
	var s []string
	for _, x := range xs {
		s = append(s, strconv.FormatFloat(x, 'f', prec, 64))
	}
	return strings.Join(s, " ")
}
