package fio

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/units"
)

// TextReader reads fio's normal (human) output, fio 2.x's and 3.x's, line
// by line, into the documents its JSON would have been: per job and
// direction the IOPS, bandwidth and IO counts, the slat/clat/lat/sync
// latencies with their percentiles, CPU, and fio's latency-target and
// steady-state lines. The text is what most blog posts and tickets hold.
// Figures are as exact as the text: counts and runtimes are exact, means
// have two decimals, percentiles are whole numbers of their unit.
type TextReader struct {
	docs []*Output
	cur  *Output
	// opts holds each job's options from the header lines that open a
	// run ("name: (g=0): rw=randread, bs=..., iodepth=16").
	opts map[string]map[string]string
	job  *textJob
	// runHasJobs says the current run has printed a job's figures: a
	// header or version line after them starts the next run.
	runHasJobs bool
	inDisks    bool
	// entries counts the jobs and option headers read, which ReadResults
	// bounds by result.MaxResults.
	entries int
}

// textJob is a job block being read.
type textJob struct {
	j *Job
	// dir is the direction the lines are about: read, write, trim,
	// mixed or sync.
	dir string
	// pct is where percentile rows go, and their unit in ns.
	pct     map[string]float64
	pctUnit float64
	// shown holds the bytes each direction printed, and shownBW its
	// bytes/s (both rounded), to check counts × block size against.
	shown   map[string]float64
	shownBW map[string]float64
	bs      int64
	hasSync bool
}

var (
	textVersion = regexp.MustCompile(`^\s*fio-(\d+\.\d+\S*)\s*$`)
	textHeader  = regexp.MustCompile(`^(.*?): \(g=(\d+)\): rw=(\w+), bs=(.*?), ioengine=([^,]+), iodepth=(\d+)`)
	textBlock   = regexp.MustCompile(`^(.*?): \(groupid=(\d+), jobs=(\d+)\): err=\s*(-?\d+)(?:: pid=\d+: (.*))?`)
	textDir3    = regexp.MustCompile(`^\s*(read|write|trim|mixed)\s*: IOPS=([\d.]+)([kKMG]?), BW=([\d.]+)([KMGTP]i?B|B)/s .*\(([\d.]+)([KMGTP]i?B|B)/(\d+)msec\)`)
	textDir2    = regexp.MustCompile(`^\s*(read|write|trim|mixed)\s*: io=([\d.]+)([KMGTP]?B), bw=([\d.]+)([KMGTP]?B)/s, iops=(\d+), runt=\s*(\d+)msec`)
	textLat     = regexp.MustCompile(`^\s*(slat|clat|lat|sync)\s*\((nsec|usec|msec|sec)\):\s*min=\s*([\d.]+)([kKMG]?),\s*max=\s*([\d.]+)([kKMG]?),\s*avg=\s*([\d.]+),\s*stdev=\s*([\d.]+)`)
	textPctHead = regexp.MustCompile(`^\s*(slat|clat|lat|sync) percentiles \((nsec|usec|msec|sec)\):`)
	textPct     = regexp.MustCompile(`([\d.]+)th=\[\s*(\d+)\]`)
	textCPU     = regexp.MustCompile(`^\s*cpu\s*:\s*usr=([\d.]+)%,\s*sys=([\d.]+)%,\s*ctx=(\d+)`)
	textIssued3 = regexp.MustCompile(`issued rwts?: total=([\d,]+) short=([\d,]+)`)
	textIssued2 = regexp.MustCompile(`issued\s*: total=r=(\d+)/w=(\d+)/d=(\d+), short=r=(\d+)/w=(\d+)/d=(\d+)`)
	textLatency = regexp.MustCompile(`^\s*latency\s*: target=(\d+), window=(\d+), percentile=([\d.]+)%, depth=(\d+)`)
	textSteady  = regexp.MustCompile(`^\s*steadystate\s*: attained=(yes|no),.*, (\w+)=([\d.]+%?)\s*$`)
	textDisk    = regexp.MustCompile(`^\s*([\w./-]+): ios=\d+/\d+`)
)

// Line takes one line of fio's output (without its newline). Lines fio
// rewrote in place with a carriage return count as several.
func (t *TextReader) Line(line string) {
	for _, l := range strings.Split(strings.TrimPrefix(line, "\ufeff"), "\r") {
		t.line(l)
	}
}

func (t *TextReader) line(l string) {
	if m := textVersion.FindStringSubmatch(l); m != nil {
		t.newRunIfDone()
		t.run().FioVersion = "fio-" + m[1]
		return
	}
	if m := textHeader.FindStringSubmatch(l); m != nil && !strings.Contains(l, "(groupid=") {
		t.newRunIfDone()
		name := jobName(m[1])
		if t.opts == nil {
			t.opts = map[string]map[string]string{}
		}
		t.entries++
		t.opts[name] = map[string]string{"rw": m[3], "bs": headerBS(m[4]), "ioengine": strings.TrimSpace(m[5]), "iodepth": m[6]}
		return
	}
	if m := textBlock.FindStringSubmatch(l); m != nil {
		t.startJob(m)
		return
	}
	if strings.HasPrefix(strings.TrimSpace(l), "Disk stats") {
		t.finishJob()
		t.inDisks = true
		return
	}
	if t.inDisks {
		if m := textDisk.FindStringSubmatch(l); m != nil && t.cur != nil && len(t.cur.DiskUtil) == 0 {
			t.cur.DiskUtil = append(t.cur.DiskUtil, DiskUtil{Name: m[1]})
		}
		return
	}
	if t.job != nil {
		t.job.line(l)
	}
}

// run returns the run being read, starting one when there is none.
func (t *TextReader) run() *Output {
	if t.cur == nil {
		t.cur = &Output{}
		t.docs = append(t.docs, t.cur)
	}
	return t.cur
}

// newRunIfDone ends the current run when it has printed its jobs.
func (t *TextReader) newRunIfDone() {
	if t.runHasJobs {
		t.finishJob()
		t.cur, t.runHasJobs, t.inDisks, t.opts = nil, false, false, nil
	}
}

func (t *TextReader) startJob(m []string) {
	t.finishJob()
	t.entries++
	t.inDisks = false
	name := jobName(m[1])
	gid, _ := strconv.Atoi(m[2])
	njobs, _ := strconv.Atoi(m[3])
	errno, _ := strconv.Atoi(m[4])
	j := Job{JobName: name, GroupID: gid, Error: errno, JobOptions: map[string]string{}}
	for k, v := range t.opts[name] {
		j.JobOptions[k] = v
	}
	if njobs > 1 {
		j.JobOptions["numjobs"] = strconv.Itoa(njobs)
	}
	run := t.run()
	if ts, err := time.Parse("Mon Jan _2 15:04:05 2006", strings.TrimSpace(m[5])); err == nil && run.Timestamp == 0 {
		run.Timestamp = ts.Unix()
	}
	bs, _ := units.ParseSize(j.JobOptions["bs"])
	t.job = &textJob{j: &j, shown: map[string]float64{}, shownBW: map[string]float64{}, bs: bs}
	t.runHasJobs = true
}

// finishJob completes the job being read and adds it to its run.
func (t *TextReader) finishJob() {
	if t.job == nil {
		return
	}
	tj := t.job
	t.job = nil
	j := tj.j
	for _, name := range []string{"read", "write", "trim", "mixed"} {
		d := dirOf(j, name)
		if d == nil || d.Runtime <= 0 {
			continue
		}
		if d.TotalIOs > 0 {
			d.IOPS = float64(d.TotalIOs) * 1000 / float64(d.Runtime)
			// Counts × a fixed block size are exact where the text's
			// bytes are rounded to three or four digits (and fio 3.x's
			// num2str can print 19.96 GiB as "19.0GiB": its rate agrees).
			b := float64(d.TotalIOs) * float64(tj.bs)
			close := func(x float64) bool { return math.Abs(b-x) <= 0.01*x }
			byRate := tj.shownBW[name] * float64(d.Runtime) / 1000
			switch {
			case tj.bs > 0 && (close(tj.shown[name]) || close(byRate)):
				d.IOBytes = int64(b)
			case byRate > 0:
				// The rate has as many digits as the total, and fio 3.x's
				// totals can be a whole unit short ("21.0MiB" for 22).
				d.IOBytes = int64(byRate)
			}
			if _, ok := j.JobOptions["bs"]; !ok && d.IOBytes > 0 {
				// No header line (a pasted excerpt): the block size is
				// the bytes per IO.
				j.JobOptions["bs"] = strconv.FormatInt(int64(math.Round(float64(d.IOBytes)/float64(d.TotalIOs))), 10)
			}
		}
		d.BWBytes = d.IOBytes * 1000 / d.Runtime
		d.BW = d.BWBytes / 1024
		for _, l := range []*LatStats{&d.SlatNs, &d.ClatNs, &d.LatNs} {
			if l.Mean > 0 || l.Max > 0 {
				l.N = uint64(max(d.TotalIOs, 0))
			}
		}
	}
	if _, ok := j.JobOptions["rw"]; !ok {
		// No header line: the direction is what the job did (fio's
		// default, read, would call a pasted write job a read).
		var did []string
		for _, name := range []string{"read", "write", "trim"} {
			if dirOf(j, name).TotalIOs > 0 {
				did = append(did, name)
			}
		}
		switch {
		case len(did) == 1:
			j.JobOptions["rw"] = did[0]
		case len(did) > 1:
			j.JobOptions["rw"] = "rw"
		}
	}
	s := &j.Sync
	if tj.hasSync && s.LatNs.N == 0 {
		// fdatasync is counted in read's short IOs up to fio 3.42.
		s.LatNs.N = uint64(max(s.TotalIOs, j.Read.ShortIOs, 0))
	}
	// The latency line prints fio's latency_target and latency_window as
	// its JSON does, in the units of that version.
	target, window := latencyUnits(t.cur.FioVersion)
	j.LatencyTarget *= target
	j.LatencyWindow *= window
	t.cur.Jobs = append(t.cur.Jobs, *j)
}

// Documents returns the runs read, each as fio's JSON would have had it.
func (t *TextReader) Documents() []*Output {
	t.finishJob()
	var out []*Output
	for _, d := range t.docs {
		if len(d.Jobs) > 0 {
			out = append(out, d)
		}
	}
	return out
}

func (tj *textJob) line(l string) {
	j := tj.j
	if m := textDir3.FindStringSubmatch(l); m != nil {
		d := tj.setDir(m[1])
		rt, _ := strconv.ParseInt(m[8], 10, 64)
		d.Runtime = rt
		d.IOPS = num(m[2]) * decimal(m[3])
		io := num(m[6]) * binary(m[7])
		tj.shown[m[1]] = io
		tj.shownBW[m[1]] = num(m[4]) * binary(m[5])
		d.IOBytes = int64(io)
		return
	}
	if m := textDir2.FindStringSubmatch(l); m != nil {
		d := tj.setDir(m[1])
		rt, _ := strconv.ParseInt(m[7], 10, 64)
		d.Runtime = rt
		d.IOPS = num(m[6])
		io := num(m[2]) * binary(m[3])
		tj.shown[m[1]] = io
		tj.shownBW[m[1]] = num(m[4]) * binary(m[5])
		d.IOBytes = int64(io)
		return
	}
	if strings.Contains(l, "fsync/fdatasync/sync_file_range:") {
		tj.dir, tj.hasSync = "sync", true
		return
	}
	if m := textLat.FindStringSubmatch(l); m != nil {
		u := timeUnit(m[2])
		ls := LatStats{Min: num(m[3]) * decimal(m[4]) * u, Max: num(m[5]) * decimal(m[6]) * u, Mean: num(m[7]) * u, Stddev: num(m[8]) * u}
		if p := tj.lat(m[1]); p != nil {
			pct := p.Percentile
			*p = ls
			p.Percentile = pct
		}
		return
	}
	if m := textPctHead.FindStringSubmatch(l); m != nil {
		tj.pct, tj.pctUnit = nil, timeUnit(m[2])
		if p := tj.lat(m[1]); p != nil {
			if p.Percentile == nil {
				p.Percentile = map[string]float64{}
			}
			tj.pct = p.Percentile
		}
		return
	}
	if tl := strings.TrimSpace(l); strings.HasPrefix(tl, "|") {
		if tj.pct != nil {
			for _, m := range textPct.FindAllStringSubmatch(tl, -1) {
				p, err1 := strconv.ParseFloat(m[1], 64)
				v, err2 := strconv.ParseFloat(m[2], 64)
				if err1 == nil && err2 == nil {
					tj.pct[strconv.FormatFloat(p, 'f', 6, 64)] = v * tj.pctUnit
				}
			}
		}
		return
	}
	tj.pct = nil
	if m := textCPU.FindStringSubmatch(l); m != nil {
		j.UsrCPU, j.SysCPU = num(m[1]), num(m[2])
		j.Ctx, _ = strconv.ParseInt(m[3], 10, 64)
		return
	}
	if m := textIssued3.FindStringSubmatch(l); m != nil {
		total, short := counts(m[1]), counts(m[2])
		for i, name := range []string{"read", "write", "trim"} {
			if i < len(total) {
				dirOf(j, name).TotalIOs = total[i]
			}
			if i < len(short) {
				dirOf(j, name).ShortIOs = short[i]
			}
		}
		if len(total) > 3 {
			j.Sync.TotalIOs = total[3]
		}
		if j.Mixed != nil {
			j.Mixed.TotalIOs = j.Read.TotalIOs + j.Write.TotalIOs + j.Trim.TotalIOs
		}
		return
	}
	if m := textIssued2.FindStringSubmatch(l); m != nil {
		c := counts(strings.Join(m[1:], ","))
		j.Read.TotalIOs, j.Write.TotalIOs, j.Trim.TotalIOs = c[0], c[1], c[2]
		j.Read.ShortIOs, j.Write.ShortIOs, j.Trim.ShortIOs = c[3], c[4], c[5]
		if j.Mixed != nil {
			j.Mixed.TotalIOs = c[0] + c[1] + c[2]
		}
		return
	}
	if m := textLatency.FindStringSubmatch(l); m != nil {
		j.LatencyTarget, j.LatencyWindow, j.LatencyPercentile = num(m[1]), num(m[2]), num(m[3])
		j.LatencyDepth, _ = strconv.Atoi(m[4])
		return
	}
	if m := textSteady.FindStringSubmatch(l); m != nil {
		attained := 0
		if m[1] == "yes" {
			attained = 1
		}
		j.Steadystate = []byte(fmt.Sprintf(`{"ss":%q,"attained":%d,"criterion":%q}`, m[2], attained, m[3]))
	}
}

// setDir makes name the current direction and returns it.
func (tj *textJob) setDir(name string) *DirStats {
	tj.dir = name
	if name == "mixed" && tj.j.Mixed == nil {
		tj.j.Mixed = &DirStats{}
	}
	return dirOf(tj.j, name)
}

// lat is the latency object kind of the current direction.
func (tj *textJob) lat(kind string) *LatStats {
	if tj.dir == "sync" || kind == "sync" {
		return &tj.j.Sync.LatNs
	}
	d := dirOf(tj.j, tj.dir)
	if d == nil {
		return nil
	}
	switch kind {
	case "slat":
		return &d.SlatNs
	case "clat":
		return &d.ClatNs
	}
	return &d.LatNs
}

// jobName strips a status line fio printed over the same line.
func jobName(s string) string {
	if i := strings.LastIndex(s, "]"); i >= 0 && strings.Contains(s, "Jobs:") {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// headerBS is the read block size of a header: "(R) 4096B-4096B, (W) ..."
// in fio 3.x, "4K-4K/4K-4K/4K-4K" in 2.x.
func headerBS(s string) string {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "(R)"))
	s, _, _ = strings.Cut(s, ",")
	s, _, _ = strings.Cut(s, "/")
	return firstComponent(s)
}

func num(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	return v
}

// decimal is fio's num2str suffix, in powers of 1000.
func decimal(s string) float64 {
	switch s {
	case "k", "K":
		return 1e3
	case "M":
		return 1e6
	case "G":
		return 1e9
	}
	return 1
}

// binary is a byte unit as fio prints it: KiB in 3.x, KB in 2.x (both
// 1024 with fio's default kb_base).
func binary(s string) float64 {
	if s == "" || s == "B" {
		return 1
	}
	return map[byte]float64{'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40, 'P': 1 << 50}[s[0]]
}

func timeUnit(s string) float64 {
	return map[string]float64{"nsec": 1, "usec": 1e3, "msec": 1e6, "sec": 1e9}[s]
}

func counts(s string) []int64 {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		v, _ := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		out = append(out, max(v, 0))
	}
	return out
}
