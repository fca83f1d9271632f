package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/result"
)

// The detection delay benchmark (-delay): emulated disks whose controller
// logs when a write cache stalls and when burst credits run out, plain fio
// writing to them in the background, and the built iolens watch on their
// loop device. Each record is timed when it reaches this program, and the
// findings are compared with the event log.

// arrived is a watch record and when this program read it.
type arrived struct {
	rec result.WatchRecord
	at  time.Time
}

// watchProc is iolens watch running on one device, streaming NDJSON.
type watchProc struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	recs   []arrived
	read   chan struct{}
	stderr strings.Builder
}

func startWatch(bin, dev string) (*watchProc, error) {
	w := &watchProc{read: make(chan struct{})}
	w.cmd = exec.Command(bin, "watch", dev, "--interval", "1s", "-o", "ndjson")
	w.cmd.Stderr = &w.stderr
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := w.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		defer close(w.read)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			at := time.Now()
			var r result.WatchRecord
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				continue
			}
			w.mu.Lock()
			w.recs = append(w.recs, arrived{r, at})
			w.mu.Unlock()
		}
	}()
	// Wait for the start record: the time axis starts there.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		w.mu.Lock()
		n := len(w.recs)
		w.mu.Unlock()
		if n > 0 {
			return w, nil
		}
	}
	w.stop()
	return nil, fmt.Errorf("iolens watch wrote no start record: %s", w.stderr.String())
}

// stop interrupts watch as Ctrl-C would and returns what it wrote.
func (w *watchProc) stop() []arrived {
	_ = w.cmd.Process.Signal(os.Interrupt)
	exited := make(chan struct{})
	go func() { _ = w.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = w.cmd.Process.Kill()
		<-exited
	}
	<-w.read
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.recs
}

// runEmulated runs fio on a fresh emulated disk under watch until done says
// the event log holds what is needed (or timeout), then lets watch run for
// linger. The disk is destroyed whatever happens.
func runEmulated(ctx context.Context, bin string, spec emulate.Spec, fioArgs []string, timeout time.Duration,
	done func([]emulate.Event) bool, linger time.Duration) (recs []arrived, evs []emulate.Event, err error) {
	root, err := os.MkdirTemp("", "iolens-bench-delay-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(root)
	spec.Dir, spec.SizeBytes = root, 1<<30
	d, err := emulate.Create(ctx, spec)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		err = errors.Join(err, d.ForceDestroy(cctx))
	}()
	w, err := startWatch(bin, filepath.Base(d.Device))
	if err != nil {
		return nil, nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			w.stop()
		}
	}()
	// An idle second or two before the workload: the random part puts the
	// events anywhere between watch's ticks, as a real workload would.
	time.Sleep(time.Second + time.Duration(rand.Int64N(int64(time.Second))))

	fctx, stopFio := context.WithCancel(ctx)
	defer stopFio()
	args := append([]string{"--name=w", "--filename=" + filepath.Join(d.Mount, "fio.dat"), "--direct=1", "--thread",
		"--time_based", fmt.Sprintf("--runtime=%d", int(timeout.Seconds())+10), "--output=/dev/null"}, fioArgs...)
	fio := d.Command(fctx, "fio", args...)
	var fioErr strings.Builder
	fio.Stderr = &fioErr
	if err := fio.Start(); err != nil {
		return nil, nil, err
	}
	fioDone := make(chan error, 1)
	go func() { fioDone <- fio.Wait() }()
	start := time.Now()
	for {
		select {
		case err := <-fioDone:
			return nil, nil, fmt.Errorf("fio ended early: %v: %s", err, fioErr.String())
		case <-ctx.Done():
			stopFio()
			<-fioDone
			return nil, nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		if evs, err = d.Events(); err != nil {
			stopFio()
			<-fioDone
			return nil, nil, err
		}
		if done(evs) || time.Since(start) > timeout {
			break
		}
	}
	// fio goes first: killed inside a stall, it would wait for the IO the
	// throttle holds.
	stopFio()
	<-fioDone
	time.Sleep(linger)
	stopped = true
	return w.stop(), evs, nil
}

// delays are the figures of one or more runs, in seconds.
type delays struct {
	startLogged, startPlaced, endLogged, endPlaced []float64
	cliffPlaced, cliffLogged                       []float64
	recordToRead                                   []float64
	missed                                         []string
}

// stallRun measures one write cache run: a 160 MB cache taking 80 MB/s in
// front of a 20 MB/s disk stalls for about 8 s after about 3 s of writes,
// twice.
func stallRun(ctx context.Context, bin string, run int, out *delays) error {
	spec := emulate.Spec{Name: "bench-stall", Limits: emulate.Limits{ReadBPS: 20e6, WriteBPS: 20e6},
		Cache: emulate.CacheReadWrite, CacheBPS: 80e6, CacheIOPS: 2000, CacheBytes: 160e6}
	recs, evs, err := runEmulated(ctx, bin, spec, []string{"--rw=write", "--bs=1M", "--iodepth=4", "--ioengine=libaio", "--size=256M"}, 60*time.Second,
		func(evs []emulate.Event) bool {
			s := emulate.Stalls(evs)
			return len(s) >= 2 && time.Since(s[1].End) > 1500*time.Millisecond
		}, 1500*time.Millisecond)
	if err != nil {
		return err
	}
	origin := recs[0].rec.Time
	axis := func(at time.Time) float64 { return at.Sub(origin).Seconds() }
	last := recs[len(recs)-1].rec.T
	shown := false
	for _, s := range emulate.Stalls(evs) {
		if axis(s.End)+2 > last {
			continue // watch ended before it could see the end
		}
		var start, end *arrived
		for i := range recs {
			f := recs[i].rec.Finding
			if f == nil || f.Kind != result.KindStall || f.Phase != "start" {
				continue
			}
			if *f.StartS >= axis(s.Start)-2 && *f.StartS < axis(s.End) {
				start = &recs[i]
				break
			}
		}
		if start == nil {
			out.missed = append(out.missed, fmt.Sprintf("run %d: stall at t=%.2f", run, axis(s.Start)))
			fmt.Fprintf(os.Stderr, "run %d: no stall start for the stall at t=%.2f\n", run, axis(s.Start))
			if !shown {
				shown = true
				fmt.Fprintf(os.Stderr, "run %d: watch saw (t:IOPS:MB/s:state):%s\n", run, series(recs))
			}
			continue
		}
		for i := range recs {
			if f := recs[i].rec.Finding; f != nil && f.Kind == result.KindStall && f.Phase == "end" && *f.StartS == *start.rec.Finding.StartS {
				end = &recs[i]
				break
			}
		}
		out.startLogged = append(out.startLogged, start.at.Sub(s.Start).Seconds())
		out.startPlaced = append(out.startPlaced, *start.rec.Finding.StartS-axis(s.Start))
		out.recordToRead = append(out.recordToRead, start.at.Sub(start.rec.Time).Seconds())
		msg := fmt.Sprintf("run %d: stall t=%.2f..%.2f: start logged +%.2f s, placed %+.2f s", run, axis(s.Start), axis(s.End),
			start.at.Sub(s.Start).Seconds(), *start.rec.Finding.StartS-axis(s.Start))
		if end == nil {
			out.missed = append(out.missed, fmt.Sprintf("run %d: end of the stall at t=%.2f", run, axis(s.Start)))
		} else {
			f := end.rec.Finding
			out.endLogged = append(out.endLogged, end.at.Sub(s.End).Seconds())
			out.endPlaced = append(out.endPlaced, *f.StartS+*f.DurationS-axis(s.End))
			msg += fmt.Sprintf("; end logged +%.2f s, placed %+.2f s", end.at.Sub(s.End).Seconds(), *f.StartS+*f.DurationS-axis(s.End))
		}
		fmt.Fprintln(os.Stderr, msg)
	}
	return nil
}

// cliffRun measures one credit burst: a gp2-style bucket scaled 30x lasts
// about 10 s at 1500 IOPS, then the disk runs at its 300 IOPS baseline.
func cliffRun(ctx context.Context, bin string, run int, out *delays) error {
	const base, burst, burstS, scale = 300, 1500, 10.0, 30
	spec := emulate.Spec{Name: "bench-cliff", Limits: emulate.Limits{ReadIOPS: base, WriteIOPS: base},
		BurstIOPS: burst, BucketIOs: (burst - base) * burstS * scale, Scale: scale}
	var ended time.Time
	recs, _, err := runEmulated(ctx, bin, spec, []string{"--rw=randwrite", "--bs=4k", "--iodepth=16", "--ioengine=libaio", "--size=32M"}, 45*time.Second,
		func(evs []emulate.Event) bool {
			for _, e := range evs {
				if e.Event == emulate.EventBurstEnd && e.Resource == emulate.ResourceIOPS {
					ended = e.Time
					return time.Since(e.Time) > 10*time.Second
				}
			}
			return false
		}, 0)
	if err != nil {
		return err
	}
	if ended.IsZero() {
		out.missed = append(out.missed, fmt.Sprintf("run %d: no burst-end in the event log", run))
		return nil
	}
	truth := ended.Sub(recs[0].rec.Time).Seconds()
	var best *arrived
	for i := range recs {
		if f := recs[i].rec.Finding; f != nil && f.Kind == result.KindCliff && (best == nil || math.Abs(*f.StartS-truth) < math.Abs(*best.rec.Finding.StartS-truth)) {
			best = &recs[i]
		}
	}
	if best == nil {
		out.missed = append(out.missed, fmt.Sprintf("run %d: cliff at t=%.2f", run, truth))
		fmt.Fprintf(os.Stderr, "run %d: no cliff for the burst that ended at t=%.2f; watch saw (t:IOPS:MB/s:state):%s\n", run, truth, series(recs))
		return nil
	}
	placed, logged := *best.rec.Finding.StartS-truth, best.at.Sub(ended).Seconds()
	out.cliffPlaced = append(out.cliffPlaced, placed)
	out.cliffLogged = append(out.cliffLogged, logged)
	fmt.Fprintf(os.Stderr, "run %d: burst ended t=%.2f: cliff placed %+.2f s, logged +%.2f s\n", run, truth, placed, logged)
	return nil
}

// series is what watch saw, for a run that missed something.
func series(recs []arrived) string {
	var b strings.Builder
	for _, a := range recs {
		if r := a.rec; r.Type == result.WatchTypeSample && len(r.Devices) > 0 {
			d := r.Devices[0]
			fmt.Fprintf(&b, " %.0f:%.0f:%.3f:%s", r.T, d.ReadIOPS+d.WriteIOPS, (d.ReadBWBytes+d.WriteBWBytes)/1e6, d.State)
		}
	}
	return b.String()
}

func delayBench(ctx context.Context, bin string, repeat int) error {
	if os.Geteuid() != 0 {
		return errors.New("-delay needs root: it attaches loop devices, mounts and writes cgroup limits")
	}
	for _, tool := range []string{"fio", "losetup", "mkfs.ext4"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("-delay needs %s", tool)
		}
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%w (build it: go build -o bin/iolens ./cmd/iolens)", err)
	}
	var d delays
	for r := 1; r <= repeat; r++ {
		if err := stallRun(ctx, bin, r, &d); err != nil {
			return fmt.Errorf("write cache run %d: %w", r, err)
		}
		if err := cliffRun(ctx, bin, r, &d); err != nil {
			return fmt.Errorf("credit run %d: %w", r, err)
		}
	}
	fmt.Printf("iolens watch (1 s interval) against the emulator's event log, %d runs of each scenario\n\n", repeat)
	fmt.Printf("%-52s %4s %8s %8s %8s\n", "seconds (watch - event log)", "n", "median", "min", "max")
	for _, row := range []struct {
		name string
		v    []float64
	}{
		{"write cache stall: start logged after the event", d.startLogged},
		{"write cache stall: start placed (StartS - event)", d.startPlaced},
		{"write cache stall: end logged after the event", d.endLogged},
		{"write cache stall: end placed (end - event)", d.endPlaced},
		{"credit burst: cliff placed (StartS - burst-end)", d.cliffPlaced},
		{"credit burst: cliff logged after burst-end", d.cliffLogged},
		{"record written to record read (stall starts)", d.recordToRead},
	} {
		if len(row.v) == 0 {
			fmt.Printf("%-52s %4d\n", row.name, 0)
			continue
		}
		s := append([]float64(nil), row.v...)
		sort.Float64s(s)
		fmt.Printf("%-52s %4d %8.2f %8.2f %8.2f\n", row.name, len(s), medianOf(s), s[0], s[len(s)-1])
	}
	if len(d.missed) > 0 {
		fmt.Printf("\nmissed: %s\n", strings.Join(d.missed, "; "))
	}
	fmt.Println("\nLogged: when this program read the record from iolens watch's stdout. Placed: where watch put the start on its time axis.")
	return nil
}

func medianOf(s []float64) float64 {
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
