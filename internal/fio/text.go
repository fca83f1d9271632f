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
	// n is the number of lines read; err the first figure that cannot
	// be read (Err returns it).
	n   int
	err error
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
	// start is the line the job's block starts on; skip says it is
	// client mode's "All clients" sum, which is left out as in JSON.
	start int
	skip  bool
	// printed holds the IOPS each direction printed and the unit of its
	// last digit (a suffix's thousand, or 1), to check the counts with;
	// atLine the line it was printed on.
	printed map[string][2]float64
	atLine  map[string]int
	// latUnit is, per latency object, the unit (ns) its min and max were
	// printed in: fio truncates them to it.
	latUnit map[*LatStats]float64
	// unitsNamed says the byte units name their base (fio 3.x: "KiB"
	// is 1024, "kB" 1000); fio 2.x's "KB" is 1000 under kb_base=1000.
	unitsNamed bool
	// decimal holds, per direction, what its bytes and rate become if
	// fio 2.x's "KB" and "MB" were 1000s (kb_base=1000).
	decimal map[string][2]float64
	// res holds, per direction, the unit of the bytes and of the rate it
	// printed: num2str can print either a whole unit short ("21.0MiB"
	// for 21.99).
	res map[string][2]float64
	// lineNo is the line being read.
	lineNo int
}

var (
	textVersion = regexp.MustCompile(`^\s*fio-(\d+\.\d+\S*)\s*$`)
	// Client mode names each server's fio: "hostname=node1, be=0,
	// 64-bit, os=Linux, arch=x86-64, fio=fio-3.16, flags=1".
	textProbe  = regexp.MustCompile(`^hostname=[^,]*, .*\bfio=fio-(\d+\.\d+[^,\s]*)`)
	textHeader = regexp.MustCompile(`^(.*?): \(g=(\d+)\): rw=(\w+), bs=(.*?), ioengine=([^,]+), iodepth=(\d+)`)
	textBlock  = regexp.MustCompile(`^(.*?): \(groupid=(\d+), jobs=(\d+)\): err=\s*(-?\d+)(?:: pid=\d+: (.*))?`)
	// fio 3.x: "read: IOPS=45.2k, BW=177MiB/s (185MB/s)(1767MiB/10001msec)";
	// kb_base=1000 prints "MB/s (177MiB/s)(1853MB/...)".
	textDir3 = regexp.MustCompile(`^\s*(read|write|trim|mixed)\s*: IOPS=([\d.]+)([kKMG]?), BW=([\d.]+)([kKMGTP]i?B|B)/s .*\(([\d.]+)([kKMGTP]i?B|B)/(\d+)msec\)`)
	// fio 2.x: "read : io=2048.0MB, bw=139810KB/s, iops=34952, runt= 15000msec";
	// 2.0.x pads a number without a suffix: "bw=516024 B/s, iops=125 , ".
	textDir2 = regexp.MustCompile(`^\s*(read|write|trim|mixed)\s*: io=([\d.]+) ?([KMGTP]?B), bw=([\d.]+) ?([KMGTP]?B)/s, iops=([\d.]+) ?([KMG]?) ?, runt=\s*(\d+)msec`)
	// "clat (usec): min=152 , max=41576 , avg=..." in 2.0.x, without the
	// spaces since.
	textLat     = regexp.MustCompile(`^\s*(slat|clat|lat|sync)\s*\((nsec|usec|msec|sec)\):\s*min=\s*([\d.]+) ?([kKMG]?) ?,\s*max=\s*([\d.]+) ?([kKMG]?) ?,\s*avg=\s*([\d.]+),\s*stdev=\s*([\d.]+)`)
	textPctHead = regexp.MustCompile(`^\s*(slat|clat|lat|sync) percentiles \((nsec|usec|msec|sec)\):`)
	textPct     = regexp.MustCompile(`([\d.]+)th=\[\s*(\d+)\]`)
	textDepths  = regexp.MustCompile(`^\s*IO depths\s*: 1=([\d.]+)%, 2=([\d.]+)%, 4=([\d.]+)%, 8=([\d.]+)%, 16=([\d.]+)%, 32=([\d.]+)%, >=64=([\d.]+)%`)
	textCPU     = regexp.MustCompile(`^\s*cpu\s*:\s*usr=([\d.]+)%,\s*sys=([\d.]+)%,\s*ctx=(\d+)`)
	textIssued3 = regexp.MustCompile(`issued rwts?: total=([\d,]+) short=([\d,]+)`)
	textIssued2 = regexp.MustCompile(`issued\s*: total=r=(\d+)/w=(\d+)/d=(\d+), short=r=(\d+)/w=(\d+)/d=(\d+)`)
	textLatency = regexp.MustCompile(`^\s*latency\s*: target=(\d+), window=(\d+), percentile=([\d.]+)%, depth=(\d+)`)
	textSteady  = regexp.MustCompile(`^\s*steadystate\s*: attained=(yes|no),.*, (\w+)=([\d.]+%?)\s*$`)
	textDisk    = regexp.MustCompile(`^\s*([\w./-]+): ios=\d+/\d+`)
)

// Line takes one line of fio's output (without its newline). A line's
// own carriage return (Windows line ends) is dropped; lines fio
// rewrote in place with a carriage return count as several.
func (t *TextReader) Line(line string) {
	t.LineAt(t.n+1, line)
}

// LineAt is Line for line number n of the input (errors name it), when
// the caller does not pass every line.
func (t *TextReader) LineAt(n int, line string) {
	t.n = n
	line = strings.TrimSuffix(strings.TrimPrefix(line, "\ufeff"), "\r")
	for i, l := range strings.Split(line, "\r") {
		if i > 0 && strings.TrimSpace(l) == "" {
			continue
		}
		if strings.HasPrefix(l, "<") {
			l = clientPrefix.ReplaceAllString(l, "")
		}
		t.line(l)
	}
}

// clientPrefix is the "<hostname> " fio's client mode puts before each
// line a server sent (its header lines, version, notes).
var clientPrefix = regexp.MustCompile(`^<[^<>\s]*> `)

// Err is the first job whose figures cannot be read, naming its line.
func (t *TextReader) Err() error {
	t.finishJob()
	return t.err
}

// TextError is fio text whose figures cannot be read, or disagree.
type TextError struct {
	Line int
	Job  string
	Why  string
}

func (e *TextError) Error() string {
	return fmt.Sprintf("line %d: fio job %s: %s", e.Line, e.Job, e.Why)
}

// Hint says what to do.
func (e *TextError) Hint() string {
	return "check that the file is fio's own output, whole and unedited; fio's JSON (--output-format=json) is read exactly"
}

func (t *TextReader) line(l string) {
	if m := matchIf(l, "hostname=", textProbe); m != nil {
		if t.run().FioVersion == "" {
			t.run().FioVersion = "fio-" + m[1]
		}
		return
	}
	if m := matchIf(l, "fio-", textVersion); m != nil {
		t.newRunIfDone()
		t.run().FioVersion = "fio-" + m[1]
		return
	}
	if m := matchIf(l, "(g=", textHeader); m != nil && !strings.Contains(l, "(groupid=") {
		t.newRunIfDone()
		name := jobName(m[1])
		if t.opts == nil {
			t.opts = map[string]map[string]string{}
		}
		t.entries++
		t.opts[name] = map[string]string{"rw": m[3], "bs": headerBS(m[4]), "ioengine": strings.TrimSpace(m[5]), "iodepth": m[6]}
		return
	}
	if m := matchIf(l, "(groupid=", textBlock); m != nil {
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
		t.job.lineNo = t.n
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
	// The text names only rw, bs, ioengine and iodepth: whether the job
	// went through the page cache is not known.
	j.optionsPartial = true
	bs, _ := units.ParseSize(j.JobOptions["bs"])
	t.job = &textJob{j: &j, shown: map[string]float64{}, shownBW: map[string]float64{}, bs: bs, start: t.n,
		skip: name == "All clients", printed: map[string][2]float64{}, decimal: map[string][2]float64{}, res: map[string][2]float64{}, atLine: map[string]int{}, latUnit: map[*LatStats]float64{}}
	t.runHasJobs = true
}

// finishJob completes the job being read and adds it to its run.
func (t *TextReader) finishJob() {
	if t.job == nil {
		return
	}
	tj := t.job
	t.job = nil
	if tj.skip {
		return
	}
	j := tj.j
	fail := func(line int, why string) {
		if t.err == nil {
			t.err = &TextError{Line: line, Job: j.JobName, Why: why}
		}
	}
	for _, name := range []string{"read", "write", "trim", "mixed"} {
		d := dirOf(j, name)
		if d != nil && d.Runtime <= 0 && d.TotalIOs > 0 && name != "mixed" {
			fail(tj.start, fmt.Sprintf("fio counted %d IOs of %s, but no %s line could be read", d.TotalIOs, name, name))
		}
		if d == nil || d.Runtime <= 0 {
			continue
		}
		if io, bw, r := tj.shown[name], tj.shownBW[name], tj.res[name]; bw > 0 || io > 0 {
			// The bytes over the runtime are the rate fio printed beside
			// them, each as exact as its last digit (and num2str can drop
			// a whole unit of it): "(500MiB/1msec)" beside "BW=250MiB/s"
			// is an edited runtime.
			rt := float64(d.Runtime) / 1000
			agree := func(io, bw float64) bool {
				lo, hi := (io-r[0])/rt, (io+2*r[0])/rt
				return hi >= (bw-r[1])*0.98 && lo <= (bw+2*r[1])*1.02
			}
			// fio 2.x's "KB" and "MB" may be 1000s (kb_base=1000).
			dec := tj.decimal[name]
			if !agree(io, bw) && (tj.unitsNamed || !agree(io*dec[0], bw*dec[1])) {
				fail(tj.atLine[name], fmt.Sprintf("%s prints a rate of %s/s, but its %s in %d ms give %s/s: the text is inconsistent",
					name, units.HumanBytes(bw), units.HumanBytes(io), d.Runtime, units.HumanBytes(io/rt)))
			}
		}
		if d.TotalIOs > 0 {
			d.IOPS = float64(d.TotalIOs) * 1000 / float64(d.Runtime)
			// fio prints IOPS as (1000 × IOs) / runtime in whole IOs,
			// through num2str, which can drop a whole unit of its last
			// place ("21.0k" for 21.99k): the counts must agree with it.
			if p, ok := tj.printed[name]; ok && (d.IOPS < p[0]*0.99-1 || d.IOPS > p[0]+p[1]+1) {
				fail(tj.atLine[name], fmt.Sprintf("%s prints %s IOPS, but its counts give %s (%d IOs in %d ms): the text is inconsistent or cut short",
					name, units.Figure(p[0]), units.Figure(d.IOPS), d.TotalIOs, d.Runtime))
			}
			// Counts × a fixed block size are exact where the text's
			// bytes are rounded to three or four digits (and fio 3.x's
			// num2str can print 19.96 GiB as "19.0GiB": its rate agrees).
			b := float64(d.TotalIOs) * float64(tj.bs)
			close := func(x float64) bool { return math.Abs(b-x) <= 0.01*x }
			byRate := tj.shownBW[name] * float64(d.Runtime) / 1000
			// fio 2.x prints "KB" and "MB" for kb_base=1000 too: its
			// bytes are decimal when only those agree with the counts.
			dec, decBW := tj.decimal[name][0], tj.decimal[name][1]
			switch {
			case tj.bs > 0 && (close(tj.shown[name]) || close(byRate)):
				d.IOBytes = int64(b)
			case tj.bs > 0 && !tj.unitsNamed && (close(tj.shown[name]*dec) || close(byRate*decBW)):
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
	if j.Error == 0 && j.Read.TotalIOs+j.Write.TotalIOs+j.Trim.TotalIOs <= 0 && (j.Mixed == nil || j.Mixed.TotalIOs <= 0) &&
		j.Read.IOBytes+j.Write.IOBytes+j.Trim.IOBytes <= 0 {
		// fio prints a job's block only when it did IO: none read means
		// the figures were not understood (or cut off), never 0 IOPS.
		fail(tj.start, "no IO figures could be read from its block (a line fio did not write, or the file cut short)")
	}
	if _, ok := j.JobOptions["iodepth"]; !ok && len(j.IodepthLevel) > 0 {
		// No header line: the depth most IOs were issued at (fio's
		// default, 1, would call a pasted QD32 job QD1).
		most, share := 1, -1.0
		for _, b := range depthBuckets {
			if v := j.IodepthLevel[b.key]; v > share {
				most, share = b.lo, v
			}
		}
		j.JobOptions["iodepth"] = strconv.Itoa(most)
		what := fmt.Sprintf("iodepth=%d", most)
		if most == 64 {
			what = "iodepth 64 or more"
		}
		j.notes = append(j.notes, "no header line: "+what+" from the depths fio issued its IOs at (IO depths)")
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
	_, fsync := j.JobOptions["fsync"]
	if _, ok := j.JobOptions["fdatasync"]; !ok && !fsync && s.LatNs.N > 0 && j.Write.TotalIOs >= int64(s.LatNs.N) {
		// The text does not name the sync option: its counts give how
		// many writes each sync closes, which bounds every write.
		n := int64(math.Round(float64(j.Write.TotalIOs) / float64(s.LatNs.N)))
		j.JobOptions["fdatasync"] = strconv.FormatInt(n, 10)
		j.notes = append(j.notes, fmt.Sprintf("a sync after every %d writes, from fio's counts (%d writes, %d syncs): the text does not say whether fsync or fdatasync", n, j.Write.TotalIOs, s.LatNs.N))
	}
	for l, u := range tj.latUnit {
		clipUnit(l, u)
	}
	// The latency line prints fio's latency_target and latency_window as
	// its JSON does, in the units of that version.
	target, window := latencyUnits(t.cur.FioVersion)
	j.LatencyTarget *= target
	j.LatencyWindow *= window
	t.cur.Jobs = append(t.cur.Jobs, *j)
}

// matchIf runs re only on a line holding key: most lines hold none of
// the few a job block has, and the check is far cheaper than the match.
func matchIf(l, key string, re *regexp.Regexp) []string {
	if !strings.Contains(l, key) {
		return nil
	}
	return re.FindStringSubmatch(l)
}

// resolution is the unit (ns) of the last digit of a latency fio
// printed: "452" msec is 1e6, "2214.5k" nsec is 100.
func resolution(digits, suffix string, unit float64) float64 {
	r := unit * decimal(suffix)
	if _, frac, ok := strings.Cut(digits, "."); ok {
		r /= math.Pow(10, float64(min(len(frac), 9)))
	}
	return r
}

// decimalShare is what a byte figure read as binary becomes when its
// unit ("KB", "MB") was decimal: (1000/1024)^k for the unit's k.
func decimalShare(unit string) float64 {
	f := 1.0
	for v := binary(unit); v >= 1024; v /= 1024 {
		f *= 1000.0 / 1024
	}
	return f
}

// clipUnit keeps the percentiles that a latency's printed max, truncated
// to its unit, leaves room for: the max is known only to that unit, so a
// percentile within it raises the max rather than being cut to it. One
// past it lies above the slowest IO (fio's bucket values can), and is
// held at the max as every record holds it.
func clipUnit(l *LatStats, unit float64) {
	if unit <= 1 {
		return
	}
	top := l.Max
	for _, v := range l.Percentile {
		if v > top && v < l.Max+unit {
			top = v
		}
	}
	l.Max = top
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
	if m := matchIf(l, "IOPS=", textDir3); m != nil {
		d := tj.setDir(m[1])
		rt, _ := strconv.ParseInt(m[8], 10, 64)
		d.Runtime = rt
		d.IOPS = num(m[2]) * decimal(m[3])
		tj.printed[m[1]], tj.atLine[m[1]] = [2]float64{d.IOPS, decimal(m[3])}, tj.lineNo
		// 3.x names its base: "KiB" is 1024, "kB" 1000 (kb_base=1000).
		io := num(m[6]) * byteUnit(m[7])
		tj.shown[m[1]] = io
		tj.shownBW[m[1]] = num(m[4]) * byteUnit(m[5])
		tj.res[m[1]] = [2]float64{byteUnit(m[7]), byteUnit(m[5])}
		tj.unitsNamed = true
		d.IOBytes = int64(io)
		return
	}
	if m := matchIf(l, "iops=", textDir2); m != nil {
		d := tj.setDir(m[1])
		rt, _ := strconv.ParseInt(m[8], 10, 64)
		d.Runtime = rt
		d.IOPS = num(m[6]) * decimal(m[7])
		tj.printed[m[1]], tj.atLine[m[1]] = [2]float64{d.IOPS, decimal(m[7])}, tj.lineNo
		io := num(m[2]) * binary(m[3])
		tj.shown[m[1]] = io
		tj.shownBW[m[1]] = num(m[4]) * binary(m[5])
		tj.decimal[m[1]] = [2]float64{decimalShare(m[3]), decimalShare(m[5])}
		tj.res[m[1]] = [2]float64{binary(m[3]), binary(m[5])}
		d.IOBytes = int64(io)
		return
	}
	if strings.Contains(l, "fsync/fdatasync/sync_file_range:") {
		tj.dir, tj.hasSync = "sync", true
		return
	}
	if m := matchIf(l, "min=", textLat); m != nil {
		u := timeUnit(m[2])
		ls := LatStats{Min: num(m[3]) * decimal(m[4]) * u, Max: num(m[5]) * decimal(m[6]) * u, Mean: num(m[7]) * u, Stddev: num(m[8]) * u}
		if p := tj.lat(m[1]); p != nil {
			pct := p.Percentile
			*p = ls
			p.Percentile = pct
			// fio divides min and max into the line's unit, dropping the
			// rest (a "k" suffix is a thousand of it).
			tj.latUnit[p] = resolution(m[5], m[6], u)
		}
		return
	}
	if m := matchIf(l, "percentiles", textPctHead); m != nil {
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
	if m := matchIf(l, "IO depths", textDepths); m != nil {
		// The share of IOs issued at each depth, as JSON's iodepth_level.
		j.IodepthLevel = map[string]float64{}
		for i, b := range depthBuckets {
			j.IodepthLevel[b.key] = num(m[i+1])
		}
		return
	}
	if m := matchIf(l, "cpu", textCPU); m != nil {
		j.UsrCPU, j.SysCPU = num(m[1]), num(m[2])
		j.Ctx, _ = strconv.ParseInt(m[3], 10, 64)
		return
	}
	if m := matchIf(l, "issued", textIssued3); m != nil {
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
	if m := matchIf(l, "issued", textIssued2); m != nil {
		c := counts(strings.Join(m[1:], ","))
		j.Read.TotalIOs, j.Write.TotalIOs, j.Trim.TotalIOs = c[0], c[1], c[2]
		j.Read.ShortIOs, j.Write.ShortIOs, j.Trim.ShortIOs = c[3], c[4], c[5]
		if j.Mixed != nil {
			j.Mixed.TotalIOs = c[0] + c[1] + c[2]
		}
		return
	}
	if m := matchIf(l, "target=", textLatency); m != nil {
		j.LatencyTarget, j.LatencyWindow, j.LatencyPercentile = num(m[1]), num(m[2]), num(m[3])
		j.LatencyDepth, _ = strconv.Atoi(m[4])
		return
	}
	if m := matchIf(l, "steadystate", textSteady); m != nil {
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
	s = firstComponent(s)
	if m := siSize.FindStringSubmatch(s); m != nil {
		// kb_base=1000: fio 3.x rounds the size to its figures in 1000s
		// ("131kB" for 128 KiB). The block size is a whole number of
		// sectors within that rounding.
		v, res := num(m[1])*byteUnit(m[2]), resolution(m[1], m[2][:1], 1)
		if c := math.Round(v/512) * 512; c > 0 && math.Abs(c-v) <= res/2 {
			v = c
		}
		return strconv.FormatInt(int64(v), 10)
	}
	return s
}

// siSize is a size fio 3.x printed in 1000s (kb_base=1000).
var siSize = regexp.MustCompile(`^([\d.]+)(kB|MB|GB)$`)

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

// byteUnit is a byte unit as fio 3.x prints it, which names its base:
// "KiB" and "MiB" are 1024s, "kB" and "MB" (kb_base=1000) 1000s.
func byteUnit(s string) float64 {
	if strings.Contains(s, "i") {
		return binary(s)
	}
	return map[string]float64{"": 1, "B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15}[s]
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
