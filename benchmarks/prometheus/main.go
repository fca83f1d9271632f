// Command prometheus measures analyze --prometheus: the time and the peak
// heap of analysing a node's history (four devices) read from a
// Prometheus API, at 15 s over 24 h and at 1 s over 1 h, and over ranges
// four times shorter and longer in the same run, to show whether memory
// grows with the range. The API is a fake serving generated node exporter series
// (promtest.Fake), run as a child process so that its own work and
// memory are not counted.
//
//	go run ./benchmarks/prometheus -reps 5
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/iolens/iolens/internal/promhist"
	"github.com/iolens/iolens/internal/promhist/promql"
	"github.com/iolens/iolens/internal/promhist/promtest"
)

// start is where every generated history begins.
var start = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func main() {
	serve := flag.String("serve", "", "(child) serve the generated history on this address")
	step := flag.Duration("step", 15*time.Second, "(child) scrape interval of the history")
	span := flag.Duration("span", 24*time.Hour, "(child) length of the history")
	reps := flag.Int("reps", 5, "repetitions of each case")
	flag.Parse()
	if *serve != "" {
		if err := http.ListenAndServe(*serve, promtest.FakeOf(history(*span, *step).Build())); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	fmt.Printf("%d CPUs, %s\n\n", runtime.NumCPU(), runtime.Version())
	fmt.Println("| history | samples a series | time (median) | peak heap (median) | allocated | findings |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for _, c := range []struct {
		span, step time.Duration
	}{{6 * time.Hour, 15 * time.Second}, {24 * time.Hour, 15 * time.Second}, {96 * time.Hour, 15 * time.Second},
		{15 * time.Minute, time.Second}, {time.Hour, time.Second}, {4 * time.Hour, time.Second}} {
		if err := measure(c.span, c.step, *reps); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// history is one node with four devices: a busy database disk that
// stalls for 20 s every 50 minutes and is held at a flat 125 MB/s for 10
// minutes every 3 hours, a log disk writing at its own pace, an idle
// disk and a lightly read one; a 2 minute gap in the middle.
func history(span, step time.Duration) *promtest.Synth {
	n := int(span/step) + 1
	s := &promtest.Synth{Instance: "node-1:9100", Start: start, Step: step, N: n, Devices: []string{"nvme0n1", "nvme1n1", "sda", "sdb"}, CPUs: 8,
		Missing: map[int]bool{}, Reset: map[int]bool{}}
	for i := n / 2; i < n/2+int(2*time.Minute/step); i++ {
		s.Missing[i] = true
	}
	at := func(i int) time.Duration { return time.Duration(i) * step }
	s.Dev = func(dev string, i int) promtest.Rates {
		t := at(i)
		switch dev {
		case "nvme0n1":
			switch {
			case t%(50*time.Minute) < 20*time.Second && t > time.Minute:
				return promtest.Rates{Util: 1, Queue: 12}
			case t%(3*time.Hour) >= time.Hour && t%(3*time.Hour) < time.Hour+10*time.Minute:
				return promtest.Rates{WriteIOPS: 500, WriteBytes: 125e6, Util: 1, Queue: 32, WriteAwaitMs: 60}
			}
			w := 60e6 * (1 + 0.3*math.Sin(float64(t)/float64(7*time.Minute)) + 0.1*math.Sin(float64(i)))
			return promtest.Rates{WriteIOPS: w / 65536, WriteBytes: w, ReadIOPS: 200, ReadBytes: 200 * 8192, Util: 0.7, Queue: 3, WriteAwaitMs: 2, ReadAwaitMs: 0.4}
		case "nvme1n1":
			w := 5e6 * (1 + 0.5*math.Sin(float64(i)/5))
			return promtest.Rates{WriteIOPS: w / 16384, WriteBytes: w, Util: 0.1, Queue: 0.2, WriteAwaitMs: 1}
		case "sdb":
			return promtest.Rates{ReadIOPS: 3, ReadBytes: 3 * 4096, Util: 0.01, ReadAwaitMs: 3}
		}
		return promtest.Rates{}
	}
	s.Host = func(i int) promtest.HostRates {
		h := promtest.HostRates{Dirty: 300 << 20, WB: 4 << 20, PressureShare: 0.01, Iowait: 0.02}
		if t := at(i); t%(50*time.Minute) < 20*time.Second && t > time.Minute {
			h.Iowait, h.PressureShare = 0.4, 0.8
		}
		return h
	}
	return s
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// measure serves the history from a child process and analyses it reps
// times.
func measure(span, step time.Duration, reps int) error {
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	child := exec.Command(os.Args[0], "-serve", addr, "-span", span.String(), "-step", step.String())
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		return err
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	url := "http://" + addr
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(url + "/api/v1/series"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the fake did not start on %s", addr)
		}
	}
	c, err := promhist.NewClient(url, promhist.Auth{}, promhist.Limits{})
	if err != nil {
		return err
	}
	o := promhist.Options{Selector: promql.Selector{{Name: "instance", Op: "=", Value: "node-1:9100"}}, From: start, To: start.Add(span)}
	var times, peaks []float64
	var alloc uint64
	found := 0
	for r := 0; r < reps; r++ {
		runtime.GC()
		base, stop := heapPeak()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		a0 := ms.TotalAlloc
		t0 := time.Now()
		a, err := promhist.Analyze(context.Background(), c, o)
		el := time.Since(t0)
		peak := stop()
		if err != nil {
			return err
		}
		runtime.ReadMemStats(&ms)
		alloc = ms.TotalAlloc - a0
		times = append(times, el.Seconds())
		peaks = append(peaks, float64(peak-base)/(1<<20))
		found = 0
		for _, n := range a.Nodes {
			found += len(n.Findings) + len(n.Ceilings)
		}
	}
	fmt.Printf("| %s at %s, 4 devices | %s | %.2f s | +%.1f MiB | %.0f MiB | %d |\n", span, step, strconv.Itoa(int(span/step)+1),
		median(times), median(peaks), float64(alloc)/(1<<20), found)
	return nil
}

// heapPeak samples the live heap every 2 ms until stop, which returns the
// peak; base is the heap when sampling began.
func heapPeak() (base uint64, stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base = read()
	var mu sync.Mutex
	peak := base
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				v := read()
				mu.Lock()
				peak = max(peak, v)
				mu.Unlock()
			}
		}
	}()
	return base, func() uint64 {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		return max(peak, read())
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
