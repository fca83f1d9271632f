// Command overhead measures what iolens costs compared with plain fio: the
// same jobs run through "iolens run" and through fio alone, in alternating
// pairs on the same file system, reporting median IOPS and MB/s ratios and
// the extra CPU time iolens spends (1 s device sampling, status parsing,
// logging). It also times "iolens run --suite quick" end to end.
//
//	go run ./benchmarks/overhead -dir /mnt/data -pairs 5 -runtime 10
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/result"
)

type job struct {
	name, rw, bs string
	qd           int
}

var jobs = []job{{"randread-4k-qd32", "randread", "4k", 32}, {"write-1m-qd8", "write", "1M", 8}}

func main() {
	dir := flag.String("dir", "./iolens-bench", "directory to test in (created and removed)")
	pairs := flag.Int("pairs", 5, "alternating iolens/fio pairs per job")
	runtime := flag.Int("runtime", 10, "seconds per run")
	size := flag.String("size", "1G", "test file size")
	iolens := flag.String("iolens", "bin/iolens", "iolens binary")
	quick := flag.Bool("quick", true, "also time 'iolens run --suite quick'")
	flag.Parse()
	if err := run(*dir, *pairs, *runtime, *size, *iolens, *quick); err != nil {
		fmt.Fprintln(os.Stderr, "overhead:", err)
		os.Exit(1)
	}
}

func childCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type measure struct {
	iops, bw float64
	cpu      time.Duration
}

func run(dir string, pairs, runtime int, size, iolens string, quick bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	plainDir := filepath.Join(dir, "plain")
	os.MkdirAll(plainDir, 0o755)
	file := filepath.Join(plainDir, "fio.dat")
	fmt.Printf("%-18s %5s %12s %12s %9s %9s %10s %10s\n", "job", "pair", "iolens IOPS", "fio IOPS", "IOPS x", "MB/s x", "cpu iolens*", "cpu fio*")
	for _, j := range jobs {
		jf := filepath.Join(dir, j.name+".fio")
		text := fmt.Sprintf("[global]\nioengine=libaio\ndirect=1\nruntime=%d\nramp_time=2\n[%s]\nrw=%s\nbs=%s\niodepth=%d\n", runtime, j.name, j.rw, j.bs, j.qd)
		if err := os.WriteFile(jf, []byte(text), 0o644); err != nil {
			return err
		}
		var ri, rb []float64
		var cpuI, cpuF []float64
		for p := 1; p <= pairs; p++ {
			var a, b measure
			var err error
			first := func() error { a, err = viaIolens(iolens, jf, dir, size); return err }
			second := func() error { b, err = viaFio(j, runtime, file, size); return err }
			if p%2 == 0 {
				first, second = second, first
			}
			if err := first(); err != nil {
				return err
			}
			if err := second(); err != nil {
				return err
			}
			ri = append(ri, a.iops/b.iops)
			rb = append(rb, a.bw/b.bw)
			cpuI = append(cpuI, a.cpu.Seconds())
			cpuF = append(cpuF, b.cpu.Seconds())
			fmt.Printf("%-18s %5d %12.0f %12.0f %9.3f %9.3f %9.2fs %9.2fs\n", j.name, p, a.iops, b.iops, a.iops/b.iops, a.bw/b.bw, a.cpu.Seconds(), b.cpu.Seconds())
		}
		fmt.Printf("%-18s median IOPS ratio %.3f, MB/s ratio %.3f; CPU per run (*each including the preconditioning of a fresh test file): iolens+fio %.2fs vs fio %.2fs (+%.2fs, %.1f%% of one core over %ds)\n\n",
			j.name, median(ri), median(rb), median(cpuI), median(cpuF), median(cpuI)-median(cpuF),
			(median(cpuI)-median(cpuF))/float64(runtime+2)*100, runtime+2)
	}
	if quick {
		start := time.Now()
		cmd := exec.Command(iolens, "run", "--suite", "quick", "-q", "--no-save", "--create", filepath.Join(dir, "quick"))
		cmd.Stdout = os.Stdout
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("quick suite: %w", err)
		}
		fmt.Printf("\niolens run --suite quick: %.1f s wall, start to report\n", time.Since(start).Seconds())
	}
	return nil
}

func viaIolens(bin, jobFile, dir, size string) (measure, error) {
	before := childCPU()
	cmd := exec.Command(bin, "run", "--job", jobFile, "--size", size, "-o", "ndjson", "-q", "--no-save", "--create", filepath.Join(dir, "iolens"))
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return measure{}, fmt.Errorf("iolens: %w", err)
	}
	var r result.Result
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &r); err != nil {
		return measure{}, err
	}
	m := measure{cpu: childCPU() - before}
	for _, d := range []*result.DirResult{r.Read, r.Write} {
		if d != nil {
			m.iops += d.IOPS
			m.bw += d.BWBytes
		}
	}
	return m, nil
}

// viaFio runs the job with plain fio on a fresh file, preconditioned the
// way iolens does its own (written once with 1 MiB direct writes), so
// both sides start from the same state.
func viaFio(j job, runtime int, file, size string) (measure, error) {
	before := childCPU()
	os.Remove(file)
	if out, err := exec.Command("fio", "--name=prep", "--filename="+file, "--size="+size, "--rw=write", "--bs=1M",
		"--direct=1", "--ioengine=libaio", "--iodepth=8", "--refill_buffers=1").CombinedOutput(); err != nil {
		return measure{}, fmt.Errorf("preconditioning: %v: %s", err, out)
	}
	args := []string{"--name=" + j.name, "--filename=" + file, "--size=" + size, "--rw=" + j.rw, "--bs=" + j.bs,
		fmt.Sprintf("--iodepth=%d", j.qd), "--direct=1", "--ioengine=libaio", "--time_based", fmt.Sprintf("--runtime=%d", runtime),
		"--ramp_time=2", "--output-format=json"}
	run, err := fio.Command{Args: args}.Exec(context.Background())
	if err != nil {
		return measure{}, err
	}
	m := measure{cpu: childCPU() - before}
	jb := run.Final.Jobs[0]
	m.iops = jb.Read.IOPS + jb.Write.IOPS
	m.bw = float64(jb.Read.BWBytes + jb.Write.BWBytes)
	return m, nil
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
