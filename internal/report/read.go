package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// ReadResults reads saved results: iolens NDJSON (one result per line), a
// JSON array of results (iolens -o json), or fio's own JSON/json+ output,
// which becomes one result per fio job. name labels fio-derived results.
func ReadResults(r io.Reader, name string) ([]result.Result, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return nil, fmt.Errorf("%s: empty file", name)
	case trimmed[0] == '[':
		var rs []result.Result
		if err := json.Unmarshal(trimmed, &rs); err != nil {
			return nil, fmt.Errorf("%s: reading a JSON array of results: %w", name, err)
		}
		return checkSchema(rs, name)
	case isNDJSONResult(trimmed):
		return readNDJSON(trimmed, name)
	}
	return fromFioOutput(data, name)
}

// ReadFiles reads every named file ("-" is standard input).
func ReadFiles(paths []string, stdin io.Reader) ([]result.Result, error) {
	var all []result.Result
	for _, p := range paths {
		var rs []result.Result
		var err error
		if p == "-" {
			rs, err = ReadResults(stdin, "stdin")
		} else {
			var f *os.File
			if f, err = os.Open(p); err != nil {
				return nil, err
			}
			rs, err = ReadResults(f, p)
			f.Close()
		}
		if err != nil {
			return nil, err
		}
		all = append(all, rs...)
	}
	return all, nil
}

func isNDJSONResult(b []byte) bool {
	line := b
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		line = b[:i]
	}
	var probe struct {
		Schema string `json:"schema"`
	}
	return json.Unmarshal(line, &probe) == nil && strings.HasPrefix(probe.Schema, "iolens.")
}

func readNDJSON(b []byte, name string) ([]result.Result, error) {
	var out []result.Result
	var watchRecs []result.WatchRecord
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if bytes.Contains(line, []byte(`"iolens.watch/`)) {
			if w, err := result.DecodeWatch(line); err == nil && result.IsWatch(w.Schema) {
				watchRecs = append(watchRecs, w)
				continue
			}
		}
		var r result.Result
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if r.Schema == "" || !strings.HasPrefix(r.Schema, "iolens.result/") {
			continue // other record kinds are not results
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(watchRecs) > 0 { // an iolens watch stream: one result per session
		ws, err := result.WatchResults(watchRecs, name)
		if err != nil {
			return nil, err
		}
		out = append(out, ws...)
	}
	return checkSchema(out, name)
}

// ErrUnknownSchema is a record written by a newer iolens.
var ErrUnknownSchema = errors.New("unknown result schema")

func checkSchema(rs []result.Result, name string) ([]result.Result, error) {
	for i, r := range rs {
		if r.Schema != result.SchemaV1 {
			return nil, fmt.Errorf("%s: record %d has schema %q; this iolens reads %s: %w", name, i+1, r.Schema, result.SchemaV1, ErrUnknownSchema)
		}
	}
	return rs, nil
}

// fromFioOutput converts fio's JSON output. With status-interval dumps
// only the last (final) document is used.
func fromFioOutput(data []byte, name string) ([]result.Result, error) {
	docs, diag, err := fio.Parse(data)
	if err != nil {
		if errors.Is(err, fio.ErrNoDocument) {
			return nil, fmt.Errorf("%s: neither iolens results nor fio JSON output (run fio with --output-format=json or json+)", name)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	doc := docs[len(docs)-1]
	end := time.UnixMilli(doc.TimestampMs).UTC()
	if doc.TimestampMs == 0 {
		end = time.Unix(doc.Timestamp, 0).UTC()
	}
	var out []result.Result
	for i, j := range doc.AllJobs() {
		res := result.Result{Schema: result.SchemaV1, RunID: "fio:" + name, Suite: "fio", Index: i + 1, Repeat: 1,
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
		if err := fio.FillFromFio(&res, []fio.Job{j}); err != nil {
			return nil, fmt.Errorf("%s: job %s: %w", name, j.JobName, err)
		}
		if len(diag) > 0 {
			res.FioStderr = strings.Join(diag, "\n")
		}
		out = append(out, res)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: fio output has no jobs", name)
	}
	return out, nil
}

// specFromOptions rebuilds what can be known of a test from fio's "job
// options" (raw strings as given; defaults are not listed).
func specFromOptions(j fio.Job) result.TestSpec {
	o := j.JobOptions
	s := result.TestSpec{Name: j.JobName, RW: o["rw"], IOEngine: o["ioengine"], IODepth: 1, NumJobs: 1}
	if s.RW == "" {
		s.RW = o["readwrite"]
	}
	if s.RW == "" {
		s.RW = "read"
	}
	if v, err := units.ParseSize(firstOf(o, "bs", "blocksize")); err == nil {
		s.BlockSize = v
	} else {
		s.BlockSize = 4096
	}
	if v, err := strconv.Atoi(o["iodepth"]); err == nil {
		s.IODepth = v
	}
	if v, err := strconv.Atoi(o["numjobs"]); err == nil {
		s.NumJobs = v
	}
	if v, err := strconv.Atoi(o["rwmixread"]); err == nil {
		s.RWMixRead = v
	}
	if v, err := strconv.Atoi(o["fdatasync"]); err == nil {
		s.Fdatasync = v
	}
	s.Direct = o["direct"] == "1"
	if v, err := strconv.ParseFloat(strings.TrimSuffix(o["runtime"], "s"), 64); err == nil {
		s.RuntimeS = v
	}
	if v, err := strconv.ParseFloat(strings.TrimSuffix(o["ramp_time"], "s"), 64); err == nil {
		s.RampS = v
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
