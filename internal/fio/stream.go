package fio

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// Caps of ReadResults: a line of fio's output, the diagnostics kept, and
// one JSON document. fio's json+ output of 64 jobs without
// group_reporting, latency bins and all, is a few MiB; a document past
// MaxDocumentBytes is refused as soon as it is that long, having held
// little more than that.
const (
	maxLine          = 4 << 20
	maxDiagnostics   = 100
	MaxDocumentBytes = 64 << 20
)

// ReadResults reads fio's JSON or json+ output as a stream and converts
// its final document into results, one per fio job. Text before and
// between documents (fio's notes) is kept as diagnostics; with
// --status-interval only the last document counts, and only it is held.
// name labels the results.
func ReadResults(r io.Reader, name string) ([]result.Result, error) {
	lr := result.NewLineReader(r, maxLine)
	var sp Splitter
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
		if d != "" && len(diag) < maxDiagnostics {
			diag = append(diag, d)
		}
		if sp.Len() > MaxDocumentBytes {
			return nil, fmt.Errorf("line %d: a fio JSON document longer than %d MiB", lr.Line, MaxDocumentBytes>>20)
		}
		if raw != nil {
			last = raw
		}
	}
	if sp.Partial() {
		return nil, fmt.Errorf("fio output ends inside a JSON document (fio killed before it finished writing?)")
	}
	if last == nil {
		return nil, fmt.Errorf("neither iolens results nor fio JSON output (run fio with --output-format=json or json+): %w", ErrNoDocument)
	}
	doc, err := Decode(last)
	if err != nil {
		return nil, err
	}
	return resultsOf(doc, diag, name)
}

// resultsOf converts one fio document.
func resultsOf(doc *Output, diag []string, name string) ([]result.Result, error) {
	end := time.UnixMilli(doc.TimestampMs).UTC()
	if doc.TimestampMs == 0 {
		end = time.Unix(doc.Timestamp, 0).UTC()
	}
	var out []result.Result
	for i, j := range doc.AllJobs() {
		res := result.Result{Schema: result.Schema, RunID: "fio:" + name, Suite: "fio", Index: i + 1, Repeat: 1,
			Test: specFromOptions(j), Target: result.Target{Kind: "file", Path: name}, FioVersion: doc.FioVersion,
			Host: result.Host{FioVersion: doc.FioVersion, Hostname: j.Hostname}, End: end, Status: "ok",
			FioJSON: doc.Raw, FioSeries: []result.FioSample{}, Devices: []result.DeviceSeries{}, System: []result.SystemSample{}}
		res.Start = end.Add(-time.Duration(max(j.Read.Runtime, j.Write.Runtime)) * time.Millisecond)
		if len(doc.DiskUtil) > 0 {
			res.Target.Device = doc.DiskUtil[0].Name
		}
		if j.Error != 0 {
			res.Status, res.Error = "failed", fmt.Sprintf("fio job error %d", j.Error)
		}
		if err := FillFromFio(&res, []Job{j}); err != nil {
			return nil, fmt.Errorf("job %s: %w", j.JobName, err)
		}
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

// specFromOptions rebuilds what can be known of a test from fio's "job
// options" (raw strings as given; defaults are not listed). The output is
// anyone's file: a value out of range (a block size of 0, a negative
// depth, NaN seconds) keeps fio's default, through units' parsers.
func specFromOptions(j Job) result.TestSpec {
	o := j.JobOptions
	s := result.TestSpec{Name: j.JobName, RW: o["rw"], IOEngine: o["ioengine"], IODepth: 1, NumJobs: 1}
	if s.RW == "" {
		s.RW = o["readwrite"]
	}
	if s.RW == "" {
		s.RW = "read"
	}
	if v, err := units.ParseSize(firstOf(o, "bs", "blocksize")); err == nil && v > 0 {
		s.BlockSize = v
	} else {
		s.BlockSize = 4096
	}
	count := func(key string, lo, hi int64, into *int) {
		if v, err := units.ParseCount(o[key], lo, hi); err == nil {
			*into = int(v)
		}
	}
	count("iodepth", 1, 1<<16, &s.IODepth)
	count("numjobs", 1, 1<<16, &s.NumJobs)
	count("rwmixread", 0, 100, &s.RWMixRead)
	count("fdatasync", 0, 1<<31-1, &s.Fdatasync)
	s.Direct = o["direct"] == "1"
	if v, err := units.ParseDuration(o["runtime"]); err == nil {
		s.RuntimeS = v.Seconds()
	}
	if v, err := units.ParseDuration(o["ramp_time"]); err == nil {
		s.RampS = v.Seconds()
	}
	return s
}

func firstOf(m map[string]string, keys ...string) string {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v
		}
	}
	return ""
}
