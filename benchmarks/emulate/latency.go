package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/iolens/iolens/internal/emulate"
)

// latStats is one direction of a fio job: IOPS and the total latency
// (submission to completion) percentiles.
type latStats struct {
	IOPS  float64 `json:"iops"`
	TotIO float64 `json:"total_ios"`
	Lat   struct {
		Percentile map[string]float64 `json:"percentile"`
	} `json:"lat_ns"`
}

func (l latStats) pct(p string) float64 { return l.Lat.Percentile[p] }

// fioLat runs fio on the disk and returns reads, writes and fdatasyncs.
func fioLat(d *emulate.Disk, file string, args ...string) (r, w, sync latStats) {
	argv := append([]string{"emulate", "exec", d.Name, "--", "fio", "--name=b", "--filename=" + file,
		"--output-format=json", "--lat_percentiles=1"}, args...)
	out := iolens(argv...)
	if i := strings.IndexByte(out, '{'); i > 0 {
		out = out[i:]
	}
	var doc struct {
		Jobs []struct {
			Read  latStats `json:"read"`
			Write latStats `json:"write"`
			Sync  struct {
				Lat struct {
					Percentile map[string]float64 `json:"percentile"`
				} `json:"lat_ns"`
			} `json:"sync"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Jobs) == 0 {
		fail(fmt.Errorf("fio output: %v", err))
	}
	j := doc.Jobs[0]
	sync.Lat.Percentile = j.Sync.Lat.Percentile
	return j.Read, j.Write, sync
}

func rt() string { return "--runtime=" + strconv.Itoa(*runtime) }

// latencyRows: QD1 latency against the configured figure, QD1 and QD32
// IOPS under a cap and a latency, and fdatasync under a flush latency.
func latencyRows() []string {
	var cpu []string
	for _, lat := range []time.Duration{time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond} {
		name := fmt.Sprintf("lat-%dms", lat/time.Millisecond)
		d := create(name, "--latency", lat.String())
		c := watchCPU(d, name)
		f := fillFile(d, 64)
		var p50, p99, iops []float64
		for i := 0; i < *repeat; i++ {
			r, _, _ := fioLat(d, f, "--direct=1", "--ioengine=libaio", "--size=64M", "--time_based", rt(), "--rw=randread", "--bs=4k", "--iodepth=1")
			p50, p99, iops = append(p50, r.pct("50.000000")/1e6), append(p99, r.pct("99.000000")/1e6), append(iops, r.IOPS)
		}
		ms := float64(lat) / 1e6
		add(name, "QD1 4k randread latency p50 (median)", ms, median(p50), "ms")
		add(name, "QD1 4k randread latency p99 (median)", ms, median(p99), "ms")
		add(name, "QD1 4k randread IOPS (median)", 1/ms*1000, median(iops), "IOPS")
		cpu = append(cpu, c.done())
		iolens("emulate", "rm", name)
	}

	d := create("lat-cap", "--iops", "5000", "--latency", "2ms")
	c := watchCPU(d, "lat-cap")
	f := fillFile(d, 64)
	for _, qd := range []int{1, 32} {
		var iops []float64
		for i := 0; i < *repeat; i++ {
			r, _, _ := fioLat(d, f, "--direct=1", "--ioengine=libaio", "--size=64M", "--time_based", rt(), "--rw=randread", "--bs=4k", "--iodepth="+strconv.Itoa(qd))
			iops = append(iops, r.IOPS)
		}
		want := 5000.0
		if qd == 1 {
			want = 500
		}
		add("lat-cap", fmt.Sprintf("--iops 5000 --latency 2ms: QD%d 4k randread IOPS (median)", qd), want, median(iops), "IOPS")
	}
	cpu = append(cpu, c.done())
	iolens("emulate", "rm", "lat-cap")

	// Overwrites of allocated blocks: ext4's fdatasync is then a cache
	// flush of the device alone, with no journal commit.
	d = create("lat-flush", "--flush-latency", "5ms", "--latency", "0")
	c = watchCPU(d, "lat-flush")
	f = fillFile(d, 16)
	var p50, p99 []float64
	for i := 0; i < *repeat; i++ {
		_, _, s := fioLat(d, f, "--direct=1", "--ioengine=sync", "--fdatasync=1", "--size=16M", "--time_based", rt(), "--rw=randwrite", "--bs=4k")
		p50, p99 = append(p50, s.Lat.Percentile["50.000000"]/1e6), append(p99, s.Lat.Percentile["99.000000"]/1e6)
	}
	add("lat-flush", "fdatasync after a 4k overwrite, p50 (median)", 5, median(p50), "ms")
	add("lat-flush", "fdatasync after a 4k overwrite, p99 (median)", 5, median(p99), "ms")
	cpu = append(cpu, c.done())
	iolens("emulate", "rm", "lat-flush")
	return cpu
}

// childCPU is the CPU time (user and system) of this process's waited
// children: iolens emulate exec and the fio it ran.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		fail(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// overhead compares the latency layer at zero latency with the plain loop
// device: IOPS at QD1 and QD32, and CPU per IO of fio (with the iolens
// exec wrapper) and of the latency daemon. The kernel's share in its own
// threads (loop workers) is in neither; the other developers' load on the
// machine is in neither either.
func overhead() []string {
	var out []string
	type res struct{ iops, cpu []float64 }
	got := map[string]*res{}
	for _, disk := range []struct {
		name, label string
		args        []string
	}{
		{"plain", "plain loop device", nil},
		{"layer", "latency layer, --latency 0", []string{"--latency", "0"}},
	} {
		d := create(disk.name, disk.args...)
		f := fillFile(d, 256)
		for _, qd := range []int{1, 32} {
			r := &res{}
			for i := 0; i < *repeat; i++ {
				c0, l0 := childCPU(), cpuOf(d.FusePID)
				x, _, _ := fioLat(d, f, "--direct=1", "--ioengine=libaio", "--size=256M", "--time_based", rt(), "--rw=randread", "--bs=4k", "--iodepth="+strconv.Itoa(qd))
				cpu := childCPU() - c0
				if d.FusePID > 0 {
					cpu += cpuOf(d.FusePID) - l0
				}
				ios := x.IOPS * float64(*runtime)
				r.iops = append(r.iops, x.IOPS)
				r.cpu = append(r.cpu, float64(cpu.Microseconds())/ios)
			}
			key := fmt.Sprintf("%s QD%d", disk.name, qd)
			got[key] = r
			out = append(out, fmt.Sprintf("| %s | QD%d | %.0f | %.1f |", disk.label, qd, median(r.iops), median(r.cpu)))
		}
		iolens("emulate", "rm", disk.name)
	}
	for _, qd := range []int{1, 32} {
		p, l := got[fmt.Sprintf("plain QD%d", qd)], got[fmt.Sprintf("layer QD%d", qd)]
		notes = append(notes, fmt.Sprintf("latency layer at zero latency, QD%d: %.3f of the plain loop device's IOPS, %.2fx its CPU per IO (medians of %d runs of %d s)",
			qd, median(l.iops)/median(p.iops), median(l.cpu)/median(p.cpu), *repeat, *runtime))
	}
	return out
}
