// Command k8s measures what 'iolens k8s run' costs on a real cluster (the
// e2e cluster: run it through benchmarks/k8s/run.sh, which starts and stops one):
//
//   - the overhead a user feels: from the command's start to the first
//     result, and from the last result to cleanup done;
//   - 1 PVC against N PVCs at once on the node: total wall time and the
//     per-target overhead (wall time minus the fio runtime);
//   - pod start to first fio IO: from the command's start to the start of
//     the first test in the pod, and from the pod's start to it;
//   - the in-pod result against the same job run by 'iolens run' on the host,
//     in the same file system as the provisioner's volumes: the IOPS ratio,
//     from alternating pairs.
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

func main() {
	iolens := flag.String("iolens", "bin/iolens", "iolens binary")
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster")
	class := flag.String("storage-class", "local-path", "storage class (uncapped)")
	hostDir := flag.String("host-dir", "", "host directory in the same file system as the class's volumes, for the in-pod comparison")
	many := flag.Int("many", 20, "PVCs at once for the parallel case")
	reps := flag.Int("reps", 3, "repetitions of each case")
	runtime := flag.Int("runtime", 5, "fio runtime per test, seconds")
	flag.Parse()
	b := &bencher{iolens: *iolens, kubeconfig: *kubeconfig, class: *class, runtime: *runtime}
	if err := b.run(*hostDir, *many, *reps); err != nil {
		fmt.Fprintln(os.Stderr, "benchmarks/k8s:", err)
		os.Exit(1)
	}
}

type bencher struct {
	iolens, kubeconfig, class string
	runtime                   int
	job                       string
}

// one is the outcome of one 'iolens k8s run'.
type one struct {
	wall, firstResult, cleanup, toFirstIO time.Duration
	// toAgent: command start to the agent's start in the first pod;
	// agentToIO: from there to its first test (preconditioning).
	toAgent, agentToIO time.Duration
	results            []result.Result
}

var summaryRE = regexp.MustCompile(`first result ([0-9.]+)s after start; cleanup done ([0-9.]+)s after the last result`)

func (b *bencher) k8sRun(volumes int) (one, error) {
	args := []string{"k8s", "--kubeconfig", b.kubeconfig, "run", "--storage-class", b.class, "--size", "1Gi",
		"--job", b.job, "-o", "ndjson", "--no-save", "--volumes-per-node", strconv.Itoa(volumes), "--parallel"}
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
	o.firstResult = secs(m[1])
	o.cleanup = secs(m[2])
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r result.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return o, err
		}
		o.results = append(o.results, r)
	}
	if len(o.results) != volumes {
		return o, fmt.Errorf("%d results, want %d", len(o.results), volumes)
	}
	// A time-based test does IO for its runtime and ends: its IO began
	// runtime before its end. (The result's start is taken before an agent
	// waits for the rest of its node's volumes.)
	ioStart := func(r result.Result) time.Time { return r.End.Add(-time.Duration(b.runtime) * time.Second) }
	firstR := o.results[0]
	for _, r := range o.results {
		if ioStart(r).Before(ioStart(firstR)) {
			firstR = r
		}
	}
	o.toFirstIO = ioStart(firstR).Sub(start)
	if t, err := time.Parse(time.RFC3339Nano, firstR.Target.Labels["k8s.agent-started"]); err == nil {
		o.toAgent, o.agentToIO = t.Sub(start), ioStart(firstR).Sub(t)
	}
	return o, nil
}

func secs(s string) time.Duration {
	f, _ := strconv.ParseFloat(s, 64)
	return time.Duration(f * float64(time.Second))
}

func (b *bencher) hostRun(dir string) (float64, error) {
	cmd := exec.Command(b.iolens, "run", "--job", b.job, "-o", "ndjson", "--no-save", "-q", dir)
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

func (b *bencher) run(hostDir string, many, reps int) error {
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
	fmt.Printf("iolens k8s run, class %s, fio randread 4k QD16 %ds on 64 MiB, medians of %d\n\n", b.class, b.runtime, reps)

	// 1 PVC, alternating with the host run of the same job.
	var wall1, first1, clean1, io1, ag1, agio1, podIOPS, hostIOPS, ratios []float64
	for i := 0; i < reps; i++ {
		o, err := b.k8sRun(1)
		if err != nil {
			return err
		}
		wall1 = append(wall1, o.wall.Seconds())
		first1 = append(first1, o.firstResult.Seconds())
		clean1 = append(clean1, o.cleanup.Seconds())
		io1 = append(io1, o.toFirstIO.Seconds())
		ag1 = append(ag1, o.toAgent.Seconds())
		agio1 = append(agio1, o.agentToIO.Seconds())
		pod := readIOPS(o.results[0])
		podIOPS = append(podIOPS, pod)
		if hostDir != "" {
			d := filepath.Join(hostDir, fmt.Sprintf("iolens-bench-%d", i))
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			h, err := b.hostRun(d)
			os.RemoveAll(d)
			if err != nil {
				return err
			}
			hostIOPS = append(hostIOPS, h)
			ratios = append(ratios, pod/h)
		}
	}
	// N PVCs at once.
	var wallN, firstN, cleanN, ioN, agN, agioN []float64
	for i := 0; i < reps; i++ {
		o, err := b.k8sRun(many)
		if err != nil {
			return err
		}
		wallN = append(wallN, o.wall.Seconds())
		firstN = append(firstN, o.firstResult.Seconds())
		cleanN = append(cleanN, o.cleanup.Seconds())
		ioN = append(ioN, o.toFirstIO.Seconds())
		agN = append(agN, o.toAgent.Seconds())
		agioN = append(agioN, o.agentToIO.Seconds())
	}
	ov1 := median(wall1) - rt.Seconds()
	ovN := median(wallN) - rt.Seconds()
	fmt.Printf("%-28s %10s %10s\n", "", "1 PVC", fmt.Sprintf("%d PVCs", many))
	fmt.Printf("%-28s %9.1fs %9.1fs\n", "wall time", median(wall1), median(wallN))
	fmt.Printf("%-28s %9.1fs %9.1fs\n", "start to first agent start", median(ag1), median(agN))
	fmt.Printf("%-28s %9.1fs %9.1fs\n", "agent start to its fio IO", median(agio1), median(agioN))
	fmt.Printf("%-28s %9.1fs %9.1fs\n", "start to first fio IO", median(io1), median(ioN))
	fmt.Printf("%-28s %9.1fs %9.1fs\n", "start to first result", median(first1), median(firstN))
	fmt.Printf("%-28s %9.1fs %9.1fs\n", "last result to cleanup done", median(clean1), median(cleanN))
	fmt.Printf("%-28s %9.1fs %9.1fs\n", "overhead (wall - fio time)", ov1, ovN)
	fmt.Printf("%-28s %9.1fs %9.2fs\n", "overhead per target", ov1, ovN/float64(many))
	if len(ratios) > 0 {
		fmt.Printf("\nin-pod vs 'iolens run' on the host, same file system, %d alternating pairs:\n", reps)
		fmt.Printf("  in-pod %.0f IOPS, host %.0f IOPS (medians); median ratio in-pod/host %.3f (pairs: %s)\n",
			median(podIOPS), median(hostIOPS), median(ratios), fmtList(ratios))
	}
	return nil
}

func fmtList(xs []float64) string {
	var s []string
	for _, x := range xs {
		s = append(s, strconv.FormatFloat(x, 'f', 3, 64))
	}
	return strings.Join(s, " ")
}
