// Command headroom measures iolens headroom over a fleet: the time and
// peak memory (the process's RSS high-water mark) of judging V volumes
// on V/5 nodes over D days at a 1 minute scrape interval, for V from 50
// to 500 and D from 1 to 30.
//
// With -tsdb DIR -iolens BIN, the history is real TSDB blocks: the node
// exporter series of 500 volumes on 100 nodes over 30 days at 1 minute
// (about 151 million samples), written 2 hours at a time as OpenMetrics
// text and turned into blocks by promtool tsdb create-blocks-from
// openmetrics (kept in DIR for the next run), served by a real
// Prometheus once its compactions have settled, and the iolens binary
// is timed over it as a user runs it: for the first V volumes (their
// nodes by --match) and the first D days.
//
//	go build -o /tmp/iolens ./cmd/iolens
//	flock / go run ./benchmarks/headroom -tsdb /var/tmp/iolens-bench-headroom -iolens /tmp/iolens
//
// Without -tsdb, the Prometheus API is served by a child
// process that computes each node exporter counter in closed form (a
// steady rate, five times higher for 30 minutes a day, at a time that
// differs by volume), so that the server's own work and memory are not
// counted and no history of billions of samples has to be stored; each
// measurement runs in a child of its own, so that one case's peak does
// not hide the next.
//
//	flock / go run ./benchmarks/headroom
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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/iolens/iolens/internal/headroom"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/promhist"
)

// start is where every generated history begins.
var start = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

const scrape = 60 // seconds

func main() {
	serve := flag.String("serve", "", "(child) serve the fleet's history on this address")
	measure := flag.String("measure", "", "(child) judge the fleet served at this URL")
	vols := flag.Int("volumes", 500, "volumes (five a node)")
	days := flag.Int("days", 30, "days of history")
	tsdb := flag.String("tsdb", "", "build the history as TSDB blocks in this directory (kept for the next run) and serve it with Prometheus")
	iolens := flag.String("iolens", "", "with -tsdb: the iolens binary to time")
	flag.Parse()
	switch {
	case *tsdb != "":
		if *iolens == "" {
			fmt.Fprintln(os.Stderr, "-tsdb needs -iolens BINARY (go build -o /tmp/iolens ./cmd/iolens)")
			os.Exit(2)
		}
		if err := realRun(*tsdb, *iolens, *vols, *days); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	case *serve != "":
		f := fleet{vols: *vols, days: *days}
		if err := http.ListenAndServe(*serve, f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	case *measure != "":
		if err := judge(*measure, *vols, *days); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	fmt.Println("| volumes | nodes | days | instants a series | wall time | CPU time | peak RSS | at cap | range queries |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, c := range [][2]int{{50, 30}, {100, 30}, {250, 30}, {500, 1}, {500, 7}, {500, 14}, {500, 30}} {
		if err := run(c[0], c[1]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// run serves one fleet and measures it in a child.
func run(vols, days int) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	srv := exec.Command(self, "-serve", addr, "-volumes", strconv.Itoa(vols), "-days", strconv.Itoa(days))
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if i > 100 {
			return fmt.Errorf("the server did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	out, err := exec.Command(self, "-measure", "http://"+addr, "-volumes", strconv.Itoa(vols), "-days", strconv.Itoa(days)).Output()
	if err != nil {
		return fmt.Errorf("measure %d volumes %d days: %w", vols, days, err)
	}
	fmt.Print(string(out))
	return nil
}

// judge runs headroom once and prints its row.
func judge(url string, vols, days int) error {
	c, err := promhist.NewClient(url, promhist.Auth{}, promhist.Limits{})
	if err != nil {
		return err
	}
	cat := limits.MustDefault()
	r, err := headroom.ParseRule("iops=3000,bw=125MB,burst-iops=6000,burst-s=1800", headroom.SourceExpect, cat)
	if err != nil {
		return err
	}
	o := headroom.Options{From: start, To: start.Add(time.Duration(days) * 24 * time.Hour), Rules: []headroom.Rule{r},
		DefaultVM: "aws:m5.large", Catalog: cat, Margin: 0.3}
	t0 := time.Now()
	rep, err := headroom.Run(context.Background(), c, o)
	if err != nil {
		return err
	}
	el := time.Since(t0)
	instants := days*24*60 + 1
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Printf("| %d | %d | %d | %d | %.1f s | %.1f s | %s | %d | %d |\n", vols, vols/5, days, instants, el.Seconds(), cpu.Seconds(), hwm(), rep.Totals.AtCap,
		4*int(math.Ceil(float64(instants)/float64(min(1000, 500_000/vols)))))
	return nil
}

// hwm is the process's peak resident set (VmHWM).
func hwm() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:")), " kB"))
			return fmt.Sprintf("%.0f MiB", float64(kb)/1024)
		}
	}
	return "unknown"
}
