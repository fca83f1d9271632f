// Package diagnosis turns a run's results into the answer a user came for:
// a model of the disk (what it delivers per direction and which limit
// binds each figure, its QD1 latency and knee, fsync and the etcd verdict,
// burst and stalls), the limit of every test, the catalog disks whose
// published limits fit, and a verdict in a few lines. It only reads the
// findings the analysis attached to the results, so the verdict can never
// contradict them. It is pure: results in, a Diagnosis out.
package diagnosis

import (
	"fmt"
	"math"
	"strings"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// Schema names the version of the diagnosis object.
const Schema = "iolens.diagnosis/v1"

// Diagnosis is the disk model and its verdict.
type Diagnosis struct {
	Schema string `json:"schema"`
	RunID  string `json:"run_id"`
	// Target is what was measured (the first result's).
	Target result.Target `json:"target"`
	// Verdict is the answer in a few lines, first in every report.
	Verdict []string `json:"verdict"`
	Disk    Disk     `json:"disk"`
	// Limits names the binding limit of every test and direction.
	Limits []Limit `json:"limits"`
	// CatalogMatch lists the catalog disks (and VM sizes) whose published
	// limits fit the measured ceilings, nearest first.
	CatalogMatch []Match `json:"catalog_match"`
	// Expected is the disk the results were compared with, and where that
	// came from (--expect, a storage class, cloud metadata); nil if none.
	Expected *Expected `json:"expected"`
	// Unknown says what the run could not establish, and why.
	Unknown []string `json:"not_established"`
	// Results are the full records (diagnose -o json only).
	Results []result.Result `json:"results,omitempty"`
}

// Disk is what the disk delivers.
type Disk struct {
	Read   *Direction `json:"read"`
	Write  *Direction `json:"write"`
	Fsync  *Fsync     `json:"fsync"`
	Burst  *Burst     `json:"burst"`
	Stalls []Stall    `json:"stalls"`
}

// Direction is one direction's ceilings and what binds them.
type Direction struct {
	// IOPS is the most small-block IOPS measured, IOPSLimit the code of
	// the limit that binds it (result.CodeIOPSCap...), IOPSTest the test.
	IOPS      float64 `json:"iops"`
	IOPSLimit string  `json:"iops_limit"`
	IOPSTest  string  `json:"iops_test"`
	// BWBytes is the most bytes/s measured with large blocks.
	BWBytes float64 `json:"bw_bytes"`
	BWLimit string  `json:"bw_limit"`
	BWTest  string  `json:"bw_test"`
	// QD1LatencyNs is the mean latency at one IO outstanding (0 when no
	// QD1 test ran), QD1P99Ns its p99.
	QD1LatencyNs float64 `json:"qd1_latency_ns"`
	QD1P99Ns     float64 `json:"qd1_p99_ns"`
	QD1IOPS      float64 `json:"qd1_iops"`
	// KneeQD is the depth where IOPS stop growing (1 when QD1 already
	// reaches the ceiling; 0 when not established).
	KneeQD int `json:"knee_qd"`
}

// Fsync is the sync latency a WAL sees.
type Fsync struct {
	P99Ns  float64 `json:"p99_ns"`
	P999Ns float64 `json:"p99_9_ns"`
	Syncs  uint64  `json:"syncs"`
	// Etcd is "pass", "warn" or "fail" against etcd's 10 ms.
	Etcd string `json:"etcd"`
}

// Burst is a cliff: a rate held for a while, then a lower baseline.
type Burst struct {
	Test      string  `json:"test"`
	Unit      string  `json:"unit"` // "bytes" (per second) or "iops"
	Rate      float64 `json:"rate"`
	DurationS float64 `json:"duration_s"`
	Baseline  float64 `json:"baseline"`
	// Between: the drop fell between two tests of the same shape (Test
	// names both), so DurationS only bounds when it happened.
	Between bool `json:"between_tests,omitempty"`
}

// Stall is a collapse of throughput.
type Stall struct {
	Test      string  `json:"test"`
	StartS    float64 `json:"start_s"`
	DurationS float64 `json:"duration_s"`
	Severity  string  `json:"severity"`
	Summary   string  `json:"summary"`
}

// Limit is the limit finding of one test and direction.
type Limit struct {
	Test           string  `json:"test"`
	Dir            string  `json:"dir"`
	Code           string  `json:"code"`
	CeilingIOPS    float64 `json:"ceiling_iops,omitempty"`
	CeilingBWBytes float64 `json:"ceiling_bw_bytes,omitempty"`
	Summary        string  `json:"summary"`
}

// Match is a catalog disk whose limits fit the measured ceilings.
type Match struct {
	Disk string `json:"disk"`
	VM   string `json:"vm,omitempty"`
	// IOPS and BWBytes are its published sustained limits.
	IOPS    float64 `json:"iops"`
	BWBytes float64 `json:"bw_bytes"`
	// Distance is the largest relative gap between a measured ceiling
	// and the disk's (0.05 = 5%).
	Distance float64 `json:"distance"`
}

// Expected is the disk the results were compared with.
type Expected struct {
	Disk   string `json:"disk"`
	VM     string `json:"vm,omitempty"`
	Source string `json:"source"`
}

// Matcher finds catalog disks whose sustained limits fit measured caps
// (0 when a figure is not a cap); the limits package provides it.
type Matcher func(iops, bwBytes float64) []Match

// Options add what the results alone do not hold.
type Options struct {
	Match    Matcher
	Expected *Expected
	// Unknown lists what a plan had no time or means to establish.
	Unknown []string
}

// Build makes the diagnosis of rs (the results of one run, with their
// findings).
func Build(rs []result.Result, o Options) Diagnosis {
	d := Diagnosis{Schema: Schema, Expected: o.Expected, Unknown: append([]string(nil), o.Unknown...), Limits: []Limit{}, CatalogMatch: []Match{}}
	d.Disk.Stalls = []Stall{}
	ok := make([]*result.Result, 0, len(rs))
	for i := range rs {
		if rs[i].Status == "ok" {
			ok = append(ok, &rs[i])
		}
	}
	if len(rs) > 0 {
		d.RunID, d.Target = rs[0].RunID, rs[0].Target
	}
	for i := range rs {
		for _, n := range rs[i].Notes {
			if u, found := strings.CutPrefix(n, result.NoteNotEstablished); found && !contains(d.Unknown, u) {
				d.Unknown = append(d.Unknown, u)
			}
		}
	}
	for _, r := range ok {
		for _, f := range r.Findings {
			switch f.Kind {
			case result.KindLimit:
				d.Limits = append(d.Limits, Limit{Test: r.Test.Name, Dir: f.Dir, Code: f.Code,
					CeilingIOPS: f.Evidence["limit_iops"], CeilingBWBytes: f.Evidence["limit_bw_bytes"], Summary: f.Summary})
			case result.KindStall:
				s := Stall{Test: r.Test.Name, Severity: f.Severity, Summary: f.Summary}
				if f.StartS != nil && f.DurationS != nil {
					s.StartS, s.DurationS = *f.StartS, *f.DurationS
				}
				d.Disk.Stalls = append(d.Disk.Stalls, s)
			case result.KindCliff:
				if d.Disk.Burst == nil {
					b := &Burst{Test: r.Test.Name, Unit: "bytes", Rate: f.Evidence["burst_rate"],
						DurationS: f.Evidence["burst_duration_s"], Baseline: f.Evidence["plateau_rate"]}
					if bs := r.Test.BlockSize; bs > 0 && !isLarge(bs) {
						// Small blocks: the credits people read about are IOPS.
						b.Unit, b.Rate, b.Baseline = "iops", b.Rate/float64(bs), b.Baseline/float64(bs)
					}
					d.Disk.Burst = b
				}
			case result.KindEtcd:
				if f.Code == result.CodeEtcdUnknown || d.Disk.Fsync != nil && d.Disk.Fsync.Syncs >= uint64(f.Evidence["syncs"]) {
					continue
				}
				d.Disk.Fsync = &Fsync{P99Ns: f.Evidence["p99_ns"], P999Ns: f.Evidence["p99_9_ns"], Syncs: uint64(f.Evidence["syncs"]),
					Etcd: strings.TrimPrefix(f.Code, "etcd-")}
			}
		}
	}
	if d.Disk.Burst == nil {
		d.Disk.Burst = dropBetweenTests(ok)
	}
	d.Disk.Read, d.Disk.Write = direction(ok, "read"), direction(ok, "write")
	if o.Match != nil {
		var capIOPS, capBW float64
		for _, dir := range []*Direction{d.Disk.Read, d.Disk.Write} {
			if dir == nil {
				continue
			}
			if dir.IOPSLimit == result.CodeIOPSCap {
				capIOPS = math.Max(capIOPS, dir.IOPS)
			}
			if dir.BWLimit == result.CodeBandwidthCap {
				capBW = math.Max(capBW, dir.BWBytes)
			}
		}
		if capIOPS > 0 || capBW > 0 {
			if m := o.Match(capIOPS, capBW); m != nil {
				d.CatalogMatch = m
			}
		}
	}
	d.Verdict = verdict(&d)
	return d
}

// isLarge is a block size whose tests measure bandwidth.
func isLarge(bs int64) bool { return bs >= 64<<10 }

func limitOf(r *result.Result, dir string) string {
	for _, f := range r.Findings {
		if f.Kind == result.KindLimit && f.Dir == dir {
			return f.Code
		}
	}
	return ""
}

// probe says a test probes something other than a ceiling.
func probe(r *result.Result) bool {
	return r.Test.Group == result.GroupLayout || r.Test.Group == result.GroupBurstCheck
}

func direction(rs []*result.Result, dir string) *Direction {
	var out Direction
	seen := false
	var qd1 *result.Result
	// Probes count only when no ceiling test measured the direction.
	ceilings := false
	for _, r := range rs {
		ceilings = ceilings || !probe(r) && r.Dir(dir) != nil && r.Test.Fdatasync == 0 && r.Test.Direct
	}
	for _, r := range rs {
		d := r.Dir(dir)
		if d == nil || d.IOPS <= 0 || r.Test.Fdatasync > 0 || !r.Test.Direct || ceilings && probe(r) {
			continue
		}
		seen = true
		qd := max(1, r.Test.IODepth) * max(1, r.Test.NumJobs)
		if isLarge(r.Test.BlockSize) {
			if d.BWBytes > out.BWBytes {
				out.BWBytes, out.BWTest, out.BWLimit = d.BWBytes, r.Test.Name, limitOf(r, dir)
			}
			continue
		}
		if d.IOPS > out.IOPS {
			out.IOPS, out.IOPSTest, out.IOPSLimit = d.IOPS, r.Test.Name, limitOf(r, dir)
		}
		if qd == 1 && (qd1 == nil || r.Dir(dir).Lat.N > qd1.Dir(dir).Lat.N) {
			qd1 = r
		}
	}
	if !seen {
		return nil
	}
	if qd1 != nil {
		q := qd1.Dir(dir)
		out.QD1LatencyNs, out.QD1P99Ns, out.QD1IOPS = q.Lat.MeanNs, q.Lat.P99Ns, q.IOPS
		if limitOf(qd1, dir) == result.CodeIOPSCap {
			out.KneeQD = 1 // QD1 already reaches the ceiling
		}
	}
	for _, r := range rs {
		if r.Dir(dir) == nil {
			continue
		}
		for _, f := range r.Findings {
			if f.Kind == result.KindQD && strings.HasPrefix(r.Test.RW, map[string]string{"read": "randread", "write": "randwrite"}[dir]) {
				if k := int(f.Evidence["knee_qd"]); k > 0 {
					out.KneeQD = k
				}
			}
		}
	}
	return &out
}

// verdict says the model in a few lines, most important first.
func verdict(d *Diagnosis) []string {
	var out []string
	for _, x := range []struct {
		name string
		dir  *Direction
	}{{"read", d.Disk.Read}, {"write", d.Disk.Write}} {
		if x.dir == nil {
			continue
		}
		var parts []string
		if x.dir.IOPS > 0 {
			parts = append(parts, fmt.Sprintf("%s IOPS (%s)", units.Figure(x.dir.IOPS), limitWords(x.dir.IOPSLimit)))
		}
		if x.dir.BWBytes > 0 {
			parts = append(parts, fmt.Sprintf("%s MB/s (%s)", units.Figure(x.dir.BWBytes/1e6), limitWords(x.dir.BWLimit)))
		}
		if x.dir.QD1LatencyNs > 0 {
			s := fmt.Sprintf("QD1 %s per IO, %s IOPS", units.Latency(x.dir.QD1LatencyNs), units.Figure(x.dir.QD1IOPS))
			if x.dir.KneeQD > 0 {
				s += fmt.Sprintf(", knee at QD%d", x.dir.KneeQD)
			}
			parts = append(parts, s)
		}
		out = append(out, fmt.Sprintf("%-6s %s", x.name+":", strings.Join(parts, "; ")))
	}
	if f := d.Disk.Fsync; f != nil {
		out = append(out, fmt.Sprintf("fsync: p99 %s over %s syncs: etcd %s (limit 10 ms)", units.Latency(f.P99Ns), units.Commas(int64(f.Syncs)), strings.ToUpper(f.Etcd)))
	}
	if b := d.Disk.Burst; b != nil && b.Between {
		out = append(out, fmt.Sprintf("burst: %s fell to %s within %s (%s): burst credits or a write cache ran out between them",
			rateWords(b.Rate, b.Unit), rateWords(b.Baseline, b.Unit), units.FormatSeconds(b.DurationS), b.Test))
	} else if b != nil {
		out = append(out, fmt.Sprintf("burst: %s for %s, then %s (%s): burst credits or a write cache ran out",
			rateWords(b.Rate, b.Unit), units.FormatSeconds(b.DurationS), rateWords(b.Baseline, b.Unit), b.Test))
	}
	if n := len(d.Disk.Stalls); n > 0 {
		worst := d.Disk.Stalls[0]
		for _, s := range d.Disk.Stalls {
			if s.DurationS > worst.DurationS {
				worst = s
			}
		}
		out = append(out, fmt.Sprintf("stalls: %d, the longest %s in %s", n, units.FormatSeconds(worst.DurationS), worst.Test))
	}
	if len(d.CatalogMatch) > 0 {
		var ms []string
		for _, m := range d.CatalogMatch[:min(3, len(d.CatalogMatch))] {
			s := m.Disk
			if m.VM != "" {
				s += " on " + m.VM
			}
			ms = append(ms, fmt.Sprintf("%s (%s IOPS, %s MB/s)", s, units.Figure(m.IOPS), units.Figure(m.BWBytes/1e6)))
		}
		out = append(out, "looks like: "+strings.Join(ms, ", "))
	}
	if e := d.Expected; e != nil {
		s := "compared with " + e.Disk
		if e.VM != "" {
			s += " on " + e.VM
		}
		out = append(out, s+" ("+e.Source+")")
	}
	if todo := advice(d); todo != "" {
		out = append(out, "to change: "+todo)
	}
	return out
}

func limitWords(code string) string {
	switch code {
	case result.CodeIOPSCap:
		return "a flat IOPS cap"
	case result.CodeBandwidthCap:
		return "a flat bandwidth cap"
	case result.CodeLatency:
		return "latency-bound"
	case result.CodeDevice:
		return "the device saturates"
	case result.CodeCPU:
		return "CPU-bound"
	case "", result.CodeUnknown:
		return "limit unknown"
	}
	return code
}

func rateWords(v float64, unit string) string {
	if unit == "iops" {
		return units.Figure(v) + " IOPS"
	}
	return units.Figure(v/1e6) + " MB/s"
}

// advice says what to change, from what binds.
func advice(d *Diagnosis) string {
	var says []string
	add := func(s string) {
		for _, x := range says {
			if x == s {
				return
			}
		}
		says = append(says, s)
	}
	for _, dir := range []*Direction{d.Disk.Read, d.Disk.Write} {
		if dir == nil {
			continue
		}
		for _, code := range []string{dir.IOPSLimit, dir.BWLimit} {
			switch code {
			case result.CodeIOPSCap, result.CodeBandwidthCap:
				add("the caps are the disk's or the VM's: a larger disk, a higher tier or a larger VM raises them; a deeper queue does not")
			case result.CodeCPU:
				add("the CPU binds: more fio jobs, io_uring, or a larger VM before judging the disk")
			case result.CodeDevice:
				add("the device saturates: a faster device, or less competing IO")
			}
		}
		if dir.QD1LatencyNs > 0 && dir.IOPS > 0 && dir.QD1IOPS < 0.5*dir.IOPS {
			add(fmt.Sprintf("one IO at a time gets %s IOPS of %s: applications need %d or more IOs in flight to reach the ceiling",
				units.Figure(dir.QD1IOPS), units.Figure(dir.IOPS), int(math.Ceil(dir.IOPS/math.Max(dir.QD1IOPS, 1)))))
		}
	}
	if f := d.Disk.Fsync; f != nil && f.Etcd == "fail" {
		add("fsync p99 is above etcd's 10 ms: put etcd's WAL on a faster disk (premium or provisioned-IOPS SSD, no host write cache)")
	}
	return strings.Join(says, "; ")
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// dropBetweenTests finds a burst that ran out between two tests of the same
// shape (pattern, block size, depth): the later one far below the earlier,
// with neither showing a cliff of its own (each was too short to). A
// credit bucket or write cache drained by the tests in between does this.
func dropBetweenTests(rs []*result.Result) *Burst {
	type shape struct {
		rw     string
		bs     int64
		qd     int
		direct bool
	}
	first := map[shape]*result.Result{}
	for _, r := range rs {
		k := shape{r.Test.RW, r.Test.BlockSize, max(1, r.Test.IODepth) * max(1, r.Test.NumJobs), r.Test.Direct}
		f, seen := first[k]
		if !seen {
			first[k] = r
			continue
		}
		for _, dir := range []string{"write", "read"} {
			a, b := f.Dir(dir), r.Dir(dir)
			if a == nil || b == nil || a.IOPS <= 0 || b.IOPS >= 0.7*a.IOPS {
				continue
			}
			dur := r.Start.Sub(f.Start).Seconds()
			return &Burst{Test: f.Test.Name + " then " + r.Test.Name, Unit: "iops", Rate: a.IOPS, DurationS: math.Max(dur, 0), Baseline: b.IOPS, Between: true}
		}
	}
	return nil
}
