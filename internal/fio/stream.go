package fio

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// Caps of ReadResults: a line of fio's output, the diagnostics kept, and
// one JSON document. fio's json+ output of 64 jobs without
// group_reporting, latency bins and all, is a few MiB; a document past
// maxDocumentBytes is refused as soon as it is that long, having held
// little more than that. A document compacted onto one line (jq -c) is
// one line: a line may be as long as a document.
const (
	maxLine          = maxDocumentBytes
	maxDiagnostics   = 100
	maxDocumentBytes = 64 << 20
)

// ReadResults reads fio's output as a stream and converts it into
// results, one per test: its JSON or json+ output (with
// --status-interval only the last document counts, and only it is
// held), or its normal text output when there is no JSON. Text before
// and between JSON documents (fio's notes) is kept as diagnostics. name
// labels the results.
func ReadResults(r io.Reader, name string) ([]result.Result, error) {
	lr := result.NewLineReader(r, maxLine)
	var sp Splitter
	var text TextReader
	var last []byte
	var diag []string
	for {
		line, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w: not fio output", lr.Line+1, err)
		}
		raw, d := sp.Line(string(line))
		if d != "" {
			if len(diag) < maxDiagnostics {
				diag = append(diag, d)
			}
			if last == nil {
				text.LineAt(lr.Line, d)
				if text.entries > result.MaxResults {
					return nil, &result.TooManyError{Max: result.MaxResults, What: "fio jobs"}
				}
			}
		}
		if sp.Len() > maxDocumentBytes {
			return nil, fmt.Errorf("line %d: a fio JSON document longer than %d MiB", lr.Line, maxDocumentBytes>>20)
		}
		if raw != nil {
			last = raw
		}
	}
	if sp.Partial() {
		return nil, fmt.Errorf("fio output ends inside a JSON document (fio killed before it finished writing?)")
	}
	if last == nil {
		docs := text.Documents()
		if err := text.Err(); err != nil {
			return nil, err
		}
		if len(docs) == 0 {
			return nil, fmt.Errorf("neither iolens results nor fio output (JSON, json+ or fio's normal text): %w", ErrNoDocument)
		}
		var out []result.Result
		seen := map[string]int{}
		for _, doc := range docs {
			rs, err := resultsFrom(doc, nil, name, len(out), seen)
			if err != nil {
				return nil, err
			}
			out = append(out, rs...)
		}
		return out, nil
	}
	// Counted before decoding: a small document of many tiny jobs
	// would otherwise take far more memory than its bytes.
	if n := topLevelEntries(last); n > result.MaxResults {
		return nil, &result.TooManyError{Max: result.MaxResults, What: "fio jobs"}
	}
	doc, err := Decode(last)
	if err != nil {
		return nil, err
	}
	return resultsOf(doc, diag, name, nil)
}

// test is one test of a fio document: the job entries that ran it at
// once.
type test struct {
	name string
	jobs []Job
}

// tests groups a document's job entries: entries of one reporting group
// and one job name are numjobs clones, or the same job on each host of a
// client/server run, and ran at once. Jobs of other names in a group are
// other tests (that happened to run at the same time).
func tests(doc *Output) []test {
	type key struct {
		group int
		name  string
	}
	var out []test
	at := map[key]int{}
	groupsOf := map[string]map[int]bool{}
	for _, j := range doc.AllJobs() {
		k := key{j.GroupID, j.JobName}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, test{name: j.JobName})
		}
		out[i].jobs = append(out[i].jobs, j)
		if groupsOf[j.JobName] == nil {
			groupsOf[j.JobName] = map[int]bool{}
		}
		groupsOf[j.JobName][j.GroupID] = true
	}
	for i := range out {
		if t := &out[i]; len(groupsOf[t.name]) > 1 {
			// One name in several groups (stonewalled runs of one job
			// section): different tests, not repeats of one.
			t.name = fmt.Sprintf("%s (group %d)", t.name, t.jobs[0].GroupID)
		}
	}
	return out
}

// resultsOf converts one fio document. before are results already made
// from earlier documents of the same input (fio's text output can hold
// several runs): indexes continue after them, and a test run again
// counts as a repeat.
func resultsOf(doc *Output, diag []string, name string, before []result.Result) ([]result.Result, error) {
	seen := map[string]int{}
	for _, r := range before {
		seen[r.Test.Name] = max(seen[r.Test.Name], r.Repeat)
	}
	return resultsFrom(doc, diag, name, len(before), seen)
}

// resultsFrom is resultsOf after made results; seen holds the repeats
// of each test name so far, and counts this document's in (so many
// runs in one text output take linear time).
func resultsFrom(doc *Output, diag []string, name string, made int, seen map[string]int) ([]result.Result, error) {
	end := time.UnixMilli(doc.TimestampMs).UTC()
	if doc.TimestampMs == 0 {
		end = time.Unix(doc.Timestamp, 0).UTC()
	}
	var out []result.Result
	for _, t := range tests(doc) {
		first := t.jobs[0]
		res := result.Result{Schema: result.Schema, RunID: "fio:" + name, Suite: "fio", Index: made + len(out) + 1,
			Target: result.Target{Kind: "file", Path: name}, FioVersion: doc.FioVersion,
			Host: result.Host{FioVersion: doc.FioVersion, Hostname: first.Hostname}, End: end, Status: "ok",
			FioSeries: []result.FioSample{}, Devices: []result.DeviceSeries{}, System: []result.SystemSample{}}
		var inferred []string
		res.Test, inferred = specOf(t)
		res.Notes = append(res.Notes, inferred...)
		depthNotes, err := checkDepth(t, &res.Test)
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", t.name, err)
		}
		res.Notes = append(res.Notes, depthNotes...)
		res.Notes = append(res.Notes, first.notes...)
		if res.Test.DirectUnknown {
			res.Notes = append(res.Notes, "whether fio used direct IO or the page cache is not in its output: read as unknown")
		}
		seen[res.Test.Name]++
		res.Repeat = seen[res.Test.Name]
		if len(out) == 0 {
			res.FioJSON = doc.Raw
		} else if len(doc.Raw) > 0 {
			res.FioJSONIn = out[0].Index
		}
		var rt int64
		for _, j := range t.jobs {
			rt = max(rt, j.Read.Runtime, j.Write.Runtime, j.Trim.Runtime)
			if j.Mixed != nil {
				rt = max(rt, j.Mixed.Runtime)
			}
		}
		res.Start = end.Add(-time.Duration(rt) * time.Millisecond)
		if len(doc.DiskUtil) > 0 {
			res.Target.Device = doc.DiskUtil[0].Name
		}
		for _, j := range t.jobs {
			if j.Error != 0 {
				who := j.JobName
				if j.Hostname != "" {
					who += " on " + j.Hostname
				}
				res.Status, res.Error = "failed", fmt.Sprintf("fio job %s failed with error %s", who, errnoText(j.Error))
				break
			}
		}
		if err := FillFromFio(&res, t.jobs); err != nil {
			return nil, fmt.Errorf("job %s: %w", t.name, err)
		}
		if res.Status == "ok" && !didIO(&res) {
			// fio lists a job that did no IO (its whole run inside the
			// ramp, a size of 0): no figure of it is a measurement.
			res.Status, res.Error = "failed", fmt.Sprintf("fio job %s did no IO: fio reported no reads, writes, trims or syncs for it", t.name)
		}
		if hs := res.Fio.Hosts; len(hs) > 1 {
			res.Host.Hostname = strings.Join(hs, ",")
		}
		res.Notes = append(res.Notes, infoNotes(res.Fio)...)
		if len(diag) > 0 {
			res.FioStderr = strings.Join(diag, "\n")
		}
		out = append(out, res)
	}
	if len(out) == 0 {
		return nil, errors.New("fio output has no jobs")
	}
	return out, nil
}

// didIO says a result holds a direction with IO in it.
func didIO(r *result.Result) bool {
	for _, name := range result.DirNames {
		if d := r.Dir(name); d != nil && (d.TotalIOs > 0 || d.IOBytes > 0 || d.IOPS > 0) {
			return true
		}
	}
	return false
}

// specOf rebuilds what can be known of a test from fio's job options
// (the job's, over the global ones; raw strings as given, defaults not
// listed). fio wrote no options before 2.3: then the block size, depth
// and direction come from what the job did, and notes say so.
func specOf(t test) (result.TestSpec, []string) {
	j := t.jobs[0]
	o := j.JobOptions
	var notes []string
	if len(o) == 0 {
		o, notes = inferOptions(&j)
	}
	s := result.TestSpec{Name: t.name, Description: o["description"], RW: firstOf(o, "rw", "readwrite"), IOEngine: o["ioengine"], IODepth: 1, NumJobs: 1}
	if s.RW == "" {
		s.RW = "read" // fio's default
	}
	if v, err := units.ParseSize(firstComponent(firstOf(o, "bs", "blocksize"))); err == nil && v > 0 {
		s.BlockSize = v
	} else {
		s.BlockSize = 4096
	}
	// Values out of what fio accepts (a NaN runtime, a negative depth)
	// are left at their defaults: a record must hold only what JSON can.
	count := func(key string, lo, hi int64, set func(int)) {
		if v, err := units.ParseCount(o[key], lo, hi); err == nil {
			set(int(v))
		}
	}
	count("iodepth", 1, 1<<16, func(v int) { s.IODepth = v })
	numjobs := 1
	count("numjobs", 1, 1<<16, func(v int) { numjobs = v })
	// Jobs at once: an entry alone on its host stands for numjobs jobs
	// (group_reporting, or numjobs=1); several entries are one job each.
	perHost := map[string]int{}
	for _, h := range hostLabels(t.jobs) {
		perHost[h]++
	}
	s.NumJobs = 0
	for _, n := range perHost {
		if n == 1 {
			s.NumJobs += numjobs
		} else {
			s.NumJobs += n
		}
	}
	if s.Mixed() {
		s.RWMixRead = 50 // fio's default; job options list only what was set
	}
	count("rwmixread", 0, 100, func(v int) { s.RWMixRead = v })
	if _, ok := o["rwmixread"]; !ok {
		count("rwmixwrite", 0, 100, func(v int) { s.RWMixRead = 100 - v })
	}
	count("fdatasync", 0, 1<<31-1, func(v int) { s.Fdatasync = v })
	s.Direct = o["direct"] == "1" || o["buffered"] == "0"
	_, d := o["direct"]
	_, b := o["buffered"]
	s.DirectUnknown = (j.optionsPartial || len(j.JobOptions) == 0) && !d && !b
	if d, err := units.ParseDuration(o["runtime"]); err == nil && d <= maxOptionTime {
		s.RuntimeS = d.Seconds()
	}
	if d, err := units.ParseDuration(o["ramp_time"]); err == nil && d <= maxOptionTime {
		s.RampS = d.Seconds()
	}
	if _, ok := o["time_based"]; !ok && s.RuntimeS > 0 {
		s.StopAtSize = true
	}
	return s, notes
}

// depthBuckets are fio's iodepth_level buckets and their lowest depth.
var depthBuckets = []struct {
	key string
	lo  int
}{{"1", 1}, {"2", 2}, {"4", 4}, {"8", 8}, {"16", 16}, {"32", 32}, {">=64", 64}}

// checkDepth holds the depth of the job options against fio's own count
// of the depths it issued at (iodepth_level): a depth fio cannot have
// run ("-8") is read from the count, with a note, and a count of IOs
// issued deeper than the options allow is refused.
func checkDepth(t test, s *result.TestSpec) ([]string, error) {
	j := t.jobs[0]
	raw, ok := j.JobOptions["iodepth"]
	if !ok || len(j.IodepthLevel) == 0 {
		if ok {
			if _, err := units.ParseCount(raw, 1, 1<<16); err != nil {
				return nil, &FigureError{Field: "job options.iodepth (" + raw + ")", Value: math.NaN(), Max: 1 << 16}
			}
		}
		return nil, nil
	}
	// The deepest bucket holding more than 1% of the IOs, and the one
	// most were issued at.
	deepest, most, share := 0, 0, -1.0
	for _, b := range depthBuckets {
		v := j.IodepthLevel[b.key]
		if v > 1 {
			deepest = b.lo
		}
		if v > share {
			most, share = b.lo, v
		}
	}
	if _, err := units.ParseCount(raw, 1, 1<<16); err != nil {
		s.IODepth = max(most, 1)
		what := fmt.Sprintf("iodepth=%d", s.IODepth)
		if most == 64 {
			what = "iodepth 64 or more"
		}
		return []string{fmt.Sprintf("fio's job options say iodepth=%q, which fio does not accept: %s from fio's iodepth_level", raw, what)}, nil
	}
	if deepest > s.IODepth {
		return nil, fmt.Errorf("fio's job options say iodepth=%d, but its iodepth_level has IOs issued at %d or more in flight: %w",
			s.IODepth, deepest, &FigureError{Field: "iodepth", Value: float64(s.IODepth), Max: float64(deepest)})
	}
	return nil, nil
}

// inferOptions tells rw, bs and iodepth from what a job did, for fio
// versions that did not write its options.
func inferOptions(j *Job) (map[string]string, []string) {
	o := map[string]string{}
	var did []string
	for _, name := range []string{"read", "write", "trim"} {
		d := dirOf(j, name)
		if d.TotalIOs > 0 {
			did = append(did, name)
			if _, ok := o["bs"]; !ok && d.IOBytes > 0 {
				o["bs"] = strconv.FormatInt(int64(math.Round(float64(d.IOBytes)/float64(d.TotalIOs))), 10)
			}
		}
	}
	switch {
	case len(did) == 1:
		o["rw"] = did[0]
	case len(did) > 1:
		o["rw"] = "rw"
	}
	// iodepth_level: the share of IOs issued at each depth bucket; the
	// job's depth is the bucket most of them were issued at.
	best, share := "", -1.0
	for _, k := range []string{"1", "2", "4", "8", "16", "32", ">=64"} {
		if v, ok := j.IodepthLevel[k]; ok && v > share {
			best, share = k, v
		}
	}
	if best != "" {
		o["iodepth"] = strings.TrimPrefix(best, ">=")
	}
	if len(o) == 0 {
		return o, nil
	}
	note := fmt.Sprintf("this fio wrote no job options: %s", strings.Join(inferredText(o), ", "))
	return o, []string{note}
}

func inferredText(o map[string]string) []string {
	var out []string
	if v, ok := o["rw"]; ok {
		out = append(out, "rw="+v+" (random or sequential unknown)")
	}
	if v, ok := o["bs"]; ok {
		out = append(out, "bs="+v+" from bytes per IO")
	}
	if v, ok := o["iodepth"]; ok {
		q := "iodepth=" + v + " from fio's iodepth_level"
		if v == "64" {
			q = "iodepth 64 or more from fio's iodepth_level"
		}
		out = append(out, q)
	}
	return out
}

// firstComponent is the read part of a per-direction value ("4k,64k")
// and the low end of a range ("4k-16k").
func firstComponent(v string) string {
	v, _, _ = strings.Cut(v, ",")
	v, _, _ = strings.Cut(v, ":")
	if i := strings.IndexByte(v[min(1, len(v)):], '-'); i >= 0 {
		v = v[:i+1]
	}
	return strings.TrimSpace(v)
}

// maxOptionTime bounds the runtime and ramp read from fio's job options.
const maxOptionTime = 365 * 24 * time.Hour

func firstOf(m map[string]string, keys ...string) string {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v
		}
	}
	return ""
}

// topLevelEntries counts the objects directly inside a JSON document's
// top-level arrays (fio's jobs, client_stats, disk_util): an upper bound
// on its jobs, read in one pass without decoding them.
func topLevelEntries(b []byte) int {
	depth, n := 0, 0
	inStr, inArray := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			if depth == 1 {
				inArray = c == '['
			}
			if depth == 2 && inArray && c == '{' {
				n++
			}
			depth++
		case '}', ']':
			depth--
		}
	}
	return n
}
