package fio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Output is one JSON document fio printed, in one schema whatever fio's
// version: decoding brings every version's units and keys to fio 3.x's
// (see schema.go). Fields iolens does not model are kept in Raw, so
// nothing fio reported is lost.
type Output struct {
	FioVersion  string     `json:"fio version"`
	Timestamp   int64      `json:"timestamp"`
	TimestampMs int64      `json:"timestamp_ms"`
	Time        string     `json:"time"`
	Jobs        []Job      `json:"jobs"`
	ClientStats []Job      `json:"client_stats"`
	DiskUtil    []DiskUtil `json:"disk_util"`
	// GlobalOptions is fio's "global options": an object, or (client
	// mode, 3.39+) one object per server. Decoding merges it into each
	// job's JobOptions, as fio applies it.
	GlobalOptions json.RawMessage `json:"global options"`
	// Raw is the document as fio wrote it, after bare nan/inf were
	// replaced by null.
	Raw json.RawMessage `json:"-"`
}

// AllJobs returns the per-job entries of a standalone or a client-mode
// document. Client mode's synthetic "All clients" entry is left out: it
// merges every job and, in fio 3.33, has no histogram.
func (o *Output) AllJobs() []Job {
	if len(o.Jobs) > 0 {
		return o.Jobs
	}
	var out []Job
	for _, j := range o.ClientStats {
		if j.JobName != "All clients" {
			out = append(out, j)
		}
	}
	return out
}

// Job is one entry of fio's "jobs" array: a job, or a reporting group.
type Job struct {
	JobName string `json:"jobname"`
	GroupID int    `json:"groupid"`
	// Error is the errno of the job's first error; 0 means success.
	Error   int   `json:"error"`
	Elapsed int64 `json:"elapsed"` // s, since fio started
	// JobOptions are the job's options with the global ones under them,
	// as fio applies them (raw strings as given; defaults not listed).
	JobOptions map[string]string `json:"job options"`
	Read       DirStats          `json:"read"`
	Write      DirStats          `json:"write"`
	Trim       DirStats          `json:"trim"`
	Mixed      *DirStats         `json:"mixed"`
	Sync       SyncStats         `json:"sync"`
	JobRuntime int64             `json:"job_runtime"` // ms, excluding ramp
	UsrCPU     float64           `json:"usr_cpu"`     // % of one CPU
	SysCPU     float64           `json:"sys_cpu"`
	Ctx        int64             `json:"ctx"`
	// IodepthLevel: % of IOs issued while the depth was in [k, 2k).
	IodepthLevel map[string]float64 `json:"iodepth_level"`
	Hostname     string             `json:"hostname"`
	Port         int                `json:"port"`
	Steadystate  json.RawMessage    `json:"steadystate"`
	// The latency_target search: fio writes these whenever its latency
	// depth is set (normally the iodepth); a search ran only when
	// LatencyTarget > 0. After decoding LatencyTarget is in ns and
	// LatencyWindow in µs, whatever units the version wrote them in.
	LatencyDepth      int     `json:"latency_depth"`
	LatencyTarget     float64 `json:"latency_target"`
	LatencyPercentile float64 `json:"latency_percentile"`
	LatencyWindow     float64 `json:"latency_window"`

	// optionsPartial says JobOptions are not all the job set (fio's text
	// names only rw, bs, ioengine and iodepth; fio before 2.3 wrote
	// none): an option not listed is unknown, not fio's default.
	optionsPartial bool
	// notes say what was inferred while reading the job.
	notes []string
}

// DirStats is one direction of a job (read, write, trim or mixed), in
// fio 3.x's units whatever the version that wrote it.
type DirStats struct {
	IOBytes  int64    `json:"io_bytes"`
	BWBytes  int64    `json:"bw_bytes"` // bytes/s
	BW       int64    `json:"bw"`       // KiB/s, always
	IOPS     float64  `json:"iops"`
	Runtime  int64    `json:"runtime"` // ms
	TotalIOs int64    `json:"total_ios"`
	ShortIOs int64    `json:"short_ios"`
	DropIOs  int64    `json:"drop_ios"`
	SlatNs   LatStats `json:"slat_ns"`
	ClatNs   LatStats `json:"clat_ns"`
	LatNs    LatStats `json:"lat_ns"`
	BWMin    float64  `json:"bw_min"`
	BWMax    float64  `json:"bw_max"`
	BWMean   float64  `json:"bw_mean"`
	BWDev    float64  `json:"bw_dev"`
	IOPSMin  float64  `json:"iops_min"`
	IOPSMax  float64  `json:"iops_max"`
	IOPSMean float64  `json:"iops_mean"`
	IOPSDev  float64  `json:"iops_stddev"`
	// nan lists the figures fio wrote as nan that no other figure
	// gives: they are unknown, and the direction is refused.
	nan []string
}

// SyncStats is fio's fsync/fdatasync section.
type SyncStats struct {
	// TotalIOs is wrong for fdatasync in fio up to 3.42 (it lands in
	// read.short_ios); use LatNs.N as the count.
	TotalIOs int64    `json:"total_ios"`
	LatNs    LatStats `json:"lat_ns"`
}

// LatStats is a latency object in ns. Percentile and Bins are present only
// when fio collected them (json+ for Bins).
type LatStats struct {
	Min        float64            `json:"min"`
	Max        float64            `json:"max"`
	Mean       float64            `json:"mean"`
	Stddev     float64            `json:"stddev"`
	N          uint64             `json:"N"`
	Percentile map[string]float64 `json:"percentile"`
	Bins       map[string]uint64  `json:"bins"`
	// nan lists min, max or mean fio wrote as nan for a latency that
	// has samples: unknown.
	nan []string
}

// DiskUtil is fio's own view of a disk's activity during the run.
type DiskUtil struct {
	Name        string  `json:"name"`
	ReadIOs     int64   `json:"read_ios"`
	WriteIOs    int64   `json:"write_ios"`
	ReadMerges  int64   `json:"read_merges"`
	WriteMerges int64   `json:"write_merges"`
	ReadTicks   int64   `json:"read_ticks"`
	WriteTicks  int64   `json:"write_ticks"`
	InQueue     int64   `json:"in_queue"`
	Util        float64 `json:"util"`
}

// ErrNoDocument means the input held no fio JSON document.
var ErrNoDocument = errors.New("no fio JSON document found")

// bareNumber matches the nan/inf values fio prints with %f, which are not
// JSON. fio writes them only as values (after a colon or in arrays).
var bareNumber = regexp.MustCompile(`([:\[,]\s*)-?(nan|inf)\b`)

// Splitter cuts fio's stdout into JSON documents, one line at a time, so a
// running fio's status dumps can be read as they arrive. fio starts every
// document with a line that is exactly "{"; a document compacted onto one
// line (jq -c, a tool's store) starts with `{"`.
type Splitter struct {
	cur   bytes.Buffer
	depth int
	in    bool
	// inStr carries string state across lines: fio writes raw newlines
	// inside strings (a job description, for one).
	inStr bool
}

// Line feeds one line (without its newline). It returns a complete
// document when this line ends one, or the line itself as a diagnostic
// when it is text outside any document.
func (s *Splitter) Line(line string) (doc []byte, diagnostic string) {
	if !s.in {
		// A byte order mark can open a file that an editor saved.
		l := strings.TrimPrefix(line, "\ufeff")
		if strings.TrimRight(l, " \t\r") == "{" {
			s.in = true
			s.cur.Reset()
			s.cur.WriteString(l)
			s.cur.WriteByte('\n')
			s.depth = 1
			s.inStr = false
			return nil, ""
		}
		if compactStart(l) {
			s.cur.Reset()
			s.in, s.depth, s.inStr = true, 0, false
			return s.Line(l)
		}
		if strings.TrimSpace(line) != "" {
			return nil, line
		}
		return nil, ""
	}
	s.cur.WriteString(line)
	s.cur.WriteByte('\n')
	var d int
	d, s.inStr = braceDelta(line, s.inStr)
	s.depth += d
	if s.depth > 0 {
		return nil, ""
	}
	s.in = false
	return append([]byte(nil), s.cur.Bytes()...), ""
}

// compactStart says a line opens a JSON object with a key: `{"fio
// version": ...` as jq -c writes fio's document, never fio's own notes.
func compactStart(l string) bool {
	t := strings.TrimLeft(l, " \t")
	if !strings.HasPrefix(t, "{") {
		return false
	}
	return strings.HasPrefix(strings.TrimLeft(t[1:], " \t"), `"`)
}

// Partial reports whether a document was started and not finished.
func (s *Splitter) Partial() bool { return s.in }

// braceDelta counts { minus } outside JSON strings on one line, starting
// inside a string when inStr, and says whether the line ends in one.
func braceDelta(line string, inStr bool) (int, bool) {
	d := 0
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case !inStr && (c == '{' || c == '['):
			if c == '{' {
				d++
			}
		case !inStr && c == '}':
			d--
		}
	}
	return d, inStr
}

// Decode reads one fio JSON document, tolerating bare nan/inf values and
// raw control characters inside strings, both of which fio can print.
func Decode(b []byte) (*Output, error) {
	b = bareNumber.ReplaceAll(b, []byte("${1}null"))
	// fio escapes only " and \ in strings; raw control characters (a
	// newline in a description) make the JSON invalid. Escape them.
	b = escapeControlInStrings(b)
	var o Output
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("decoding fio JSON: %w", err)
	}
	o.normalize()
	o.Raw = append(json.RawMessage(nil), b...)
	return &o, nil
}

func escapeControlInStrings(b []byte) []byte {
	var out []byte
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr && c == '\\' && i+1 < len(b) {
			out = append(out, c, b[i+1])
			i++
			continue
		}
		if c == '"' {
			inStr = !inStr
		}
		if inStr && c < 0x20 {
			out = append(out, []byte(fmt.Sprintf(`\u%04x`, c))...)
			continue
		}
		out = append(out, c)
	}
	return out
}

// Len is the size of the document being gathered.
func (s *Splitter) Len() int { return s.cur.Len() }
