package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The node exporter counters headroom reads, each a counter family.
var nodeMetrics = []string{
	"node_disk_io_time_seconds_total",
	"node_disk_reads_completed_total",
	"node_disk_writes_completed_total",
	"node_disk_read_bytes_total",
	"node_disk_written_bytes_total",
	"node_disk_read_time_seconds_total",
	"node_disk_write_time_seconds_total",
}

// blockS is the span of one promtool block (its default, 2 hours): each
// OpenMetrics file holds one, so that promtool reads it twice rather
// than once per block of a longer file.
const blockS = 7200

// realRun builds the fleet's history as TSDB blocks in dir with promtool
// (unless dir holds them from an earlier run of the same size), serves
// them with a real Prometheus, and times the iolens binary over it.
func realRun(dir, iolens string, vols, days int) error {
	data := filepath.Join(dir, "data")
	marker := filepath.Join(dir, fmt.Sprintf("built-%dv-%dd", vols, days))
	if _, err := os.Stat(marker); err != nil {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if err := os.MkdirAll(data, 0o755); err != nil {
			return err
		}
		t0 := time.Now()
		cpu0 := childCPU()
		n, bytes, err := build(dir, data, vols, days)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "built %d samples (%.0f MB of OpenMetrics text) in %.0f s (promtool CPU %.0f s)\n",
			n, float64(bytes)/1e6, time.Since(t0).Seconds(), (childCPU() - cpu0).Seconds())
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "TSDB on disk: %.0f MB\n", float64(duSize(data))/1e6)
	p, err := startPrometheus(dir, data)
	if err != nil {
		return err
	}
	defer p.stop()
	fmt.Fprintf(os.Stderr, "Prometheus %s ready; waiting for its compactions to settle\n", p.url)
	settled, blocks := p.settle()
	fmt.Fprintf(os.Stderr, "compactions settled after %.0f s: %d blocks\n", settled.Seconds(), blocks)

	fmt.Println("| volumes | nodes | days | wall time | iolens CPU | iolens peak RSS | Prometheus CPU | Prometheus RSS after | at cap |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	cases := [][2]int{{50, 30}, {100, 30}, {250, 30}, {500, 1}, {500, 7}, {500, 14}, {500, 30}}
	if vols < 500 || days < 30 {
		cases = [][2]int{{vols, days}} // a small run, to try the benchmark
	}
	for _, c := range cases {
		if err := p.time(iolens, c[0], c[1]); err != nil {
			return err
		}
	}
	return nil
}

// build writes the history 2 hours at a time as OpenMetrics text and
// has promtool turn each into a block; the next file is written while
// promtool reads the last.
func build(dir, data string, vols, days int) (samples int64, size int64, err error) {
	f := fleet{vols: vols, days: days}
	end := days * 86400
	var pending *exec.Cmd
	var pendingFile string
	var pendingOut bytes.Buffer
	wait := func() error {
		if pending == nil {
			return nil
		}
		err := pending.Wait()
		os.Remove(pendingFile)
		if err != nil {
			return fmt.Errorf("promtool tsdb create-blocks-from openmetrics: %v\n%s", err, pendingOut.String())
		}
		pending = nil
		return nil
	}
	for b := 0; b*blockS <= end; b++ {
		file := filepath.Join(dir, fmt.Sprintf("block-%05d.om", b))
		n, sz, err := writeOpenMetrics(file, f, b*blockS, min((b+1)*blockS, end+1))
		if err != nil {
			return 0, 0, err
		}
		samples += n
		size += sz
		if err := wait(); err != nil {
			return 0, 0, err
		}
		pendingOut.Reset()
		pending = exec.Command("promtool", "tsdb", "create-blocks-from", "openmetrics", "-q", file, data)
		pending.Stdout, pending.Stderr = &pendingOut, &pendingOut
		pendingFile = file
		if err := pending.Start(); err != nil {
			return 0, 0, err
		}
		if b%12 == 11 {
			fmt.Fprintf(os.Stderr, "day %d of %d\n", (b+1)/12, days)
		}
	}
	return samples, size, wait()
}

// writeOpenMetrics writes every series' samples from from to before to
// (seconds after start, one a scrape interval).
func writeOpenMetrics(file string, f fleet, from, to int) (samples, size int64, err error) {
	out, err := os.Create(file)
	if err != nil {
		return 0, 0, err
	}
	w := bufio.NewWriterSize(out, 1<<20)
	first := (from + scrape - 1) / scrape * scrape
	num := make([]byte, 0, 32)
	for _, m := range nodeMetrics {
		fmt.Fprintf(w, "# TYPE %s counter\n", strings.TrimSuffix(m, "_total"))
		for v := 0; v < f.vols; v++ {
			prefix := fmt.Sprintf("%s{device=%q,instance=%q,job=\"node\"} ", m, f.dev(v), f.inst(v))
			for t := first; t < to; t += scrape {
				w.WriteString(prefix)
				num = strconv.AppendFloat(num[:0], value(m, v, float64(t)), 'f', -1, 64)
				num = append(num, ' ')
				num = strconv.AppendInt(num, start.Unix()+int64(t), 10)
				num = append(num, '\n')
				w.Write(num)
				samples++
			}
		}
	}
	w.WriteString("# EOF\n")
	if err := w.Flush(); err != nil {
		out.Close()
		return 0, 0, err
	}
	st, err := out.Stat()
	if err == nil {
		size = st.Size()
	}
	return samples, size, errors.Join(err, out.Close())
}

// prom is a running Prometheus serving the built blocks.
type prom struct {
	cmd *exec.Cmd
	url string
	log *os.File
}

func startPrometheus(dir, data string) (*prom, error) {
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 1m\n"), 0o644); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		return nil, err
	}
	// The history is months old: a retention longer than its age keeps
	// every block.
	cmd := exec.Command("prometheus", "--config.file="+cfg, "--storage.tsdb.path="+data, "--web.listen-address="+addr,
		"--storage.tsdb.retention.time=100y")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &prom{cmd: cmd, url: "http://" + addr, log: logf}
	for i := 0; ; i++ {
		if resp, err := http.Get(p.url + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p, nil
			}
		}
		if i > 1200 {
			p.stop()
			return nil, fmt.Errorf("Prometheus not ready after 10 minutes (log in %s)", logf.Name())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func (p *prom) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
	p.log.Close()
}

// metric reads one of Prometheus's own metrics.
func (p *prom) metric(name string) float64 {
	resp, err := http.Get(p.url + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == name {
			v, _ := strconv.ParseFloat(f[1], 64)
			return v
		}
	}
	return -1
}

// settle waits until the compactor has merged the 2 hour blocks into
// the larger ones a Prometheus that held this history would have: the
// loaded blocks unchanged for 90 s.
func (p *prom) settle() (time.Duration, int) {
	t0 := time.Now()
	last, same := -1.0, 0
	for {
		time.Sleep(5 * time.Second)
		b := p.metric("prometheus_tsdb_blocks_loaded")
		if b == last {
			same++
		} else {
			same = 0
		}
		last = b
		// The compactor looks once a minute: unchanged for 90 s is
		// settled.
		if same >= 18 {
			return time.Since(t0) - 90*time.Second, int(b)
		}
	}
}

// procStat is a process's CPU time and resident set from /proc.
func procStat(pid int) (cpu time.Duration, rssMB, hwmMB float64) {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i > 0 {
			f := strings.Fields(s[i+2:])
			if len(f) > 12 {
				u, _ := strconv.ParseInt(f[11], 10, 64)
				k, _ := strconv.ParseInt(f[12], 10, 64)
				cpu = time.Duration(u+k) * time.Second / 100 // USER_HZ
			}
		}
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				kb, _ := strconv.ParseFloat(f[1], 64)
				switch f[0] {
				case "VmRSS:":
					rssMB = kb / 1024
				case "VmHWM:":
					hwmMB = kb / 1024
				}
			}
		}
	}
	return cpu, rssMB, hwmMB
}

// childCPU is the CPU time of this process's waited-for children.
func childCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// time runs 'iolens headroom' over the first vols volumes (their nodes,
// by --match) and days days, and prints its row.
func (p *prom) time(iolens string, vols, days int) error {
	f := fleet{vols: vols}
	var insts []string
	for v := 0; v < vols; v += 5 {
		insts = append(insts, f.inst(v)) // no regexp metacharacters
	}
	args := []string{"headroom", "--prometheus", p.url, "--match", `{instance=~"` + strings.Join(insts, "|") + `"}`,
		"--from", start.Format(time.RFC3339), "--to", start.Add(time.Duration(days) * 24 * time.Hour).Format(time.RFC3339),
		"--expect", "iops=3000,bw=125MB,burst-iops=6000,burst-s=1800", "--vm", "aws:m5.large", "-o", "json"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, iolens, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	pcpu0, _, _ := procStat(p.cmd.Process.Pid)
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("iolens %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	wall := time.Since(t0)
	pcpu1, prss, _ := procStat(p.cmd.Process.Pid)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	var rep struct {
		Volumes []json.RawMessage `json:"volumes"`
		Totals  struct {
			AtCap int `json:"at_cap"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		return fmt.Errorf("iolens headroom -o json: %v", err)
	}
	if len(rep.Volumes) != vols {
		return fmt.Errorf("%d volumes in the report, want %d", len(rep.Volumes), vols)
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Printf("| %d | %d | %d | %.1f s | %.1f s | %.0f MiB | %.1f s | %.0f MiB | %d |\n", vols, vols/5, days, wall.Seconds(), cpu.Seconds(),
		float64(ru.Maxrss)/1024, (pcpu1 - pcpu0).Seconds(), prss, rep.Totals.AtCap)
	return nil
}

// duSize is the bytes of the files under dir.
func duSize(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}
