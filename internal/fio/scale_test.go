package fio

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/scaletest"
)

// manyText is fio's normal text output of n jobs, each the first job of
// testdata/fio-3.25_two_groups.txt under its own name.
func manyText(t testing.TB, n int) []byte {
	b, err := os.ReadFile("testdata/fio-3.25_two_groups.txt")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	job := s[strings.Index(s, "seq-read: (groupid"):strings.Index(s, "rand-write: (groupid")]
	var out bytes.Buffer
	fmt.Fprintf(&out, "fio-3.25\nStarting %d processes\n\n", n)
	for i := range n {
		out.WriteString(strings.Replace(job, "seq-read:", fmt.Sprintf("job%d:", i), 1))
	}
	out.WriteString("\nRun status group 0 (all jobs):\n   READ: bw=870MiB/s (913MB/s), 870MiB/s-870MiB/s (913MB/s-913MB/s), io=8704MiB (9127MB), run=10001-10001msec\n")
	return out.Bytes()
}

// manyJSON is fio's JSON output of n jobs, each in its own reporting
// group (fio without group_reporting, one job section each).
func manyJSON(n int) []byte {
	var out bytes.Buffer
	out.WriteString("{\n\"fio version\" : \"fio-3.33\",\n\"timestamp\" : 1700000000,\n\"global options\" : {},\n\"jobs\" : [\n")
	for i := range n {
		if i > 0 {
			out.WriteString(",\n")
		}
		fmt.Fprintf(&out, `{"jobname":"j%d","groupid":%d,"error":0,"job options":{"rw":"randread","bs":"4k","iodepth":"8"},`+
			`"read":{"io_bytes":409600,"io_kbytes":400,"bw_bytes":40960,"bw":40,"iops":10.0,"runtime":10000,"total_ios":100,`+
			`"clat_ns":{"min":1000,"max":9000,"mean":5000.0,"stddev":100.0,"N":100},"lat_ns":{"min":1000,"max":9000,"mean":5000.0,"stddev":100.0,"N":100}},`+
			`"job_runtime":10000,"usr_cpu":1.0,"sys_cpu":1.0,"ctx":100,"iodepth_level":{"1":0.0,"2":0.0,"4":0.0,"8":100.0,"16":0.0,"32":0.0,">=64":0.0}}`, i, i)
	}
	out.WriteString("\n]\n}\n")
	return out.Bytes()
}

func readAll(t testing.TB, in []byte, want int) {
	rs, err := ReadResults(bytes.NewReader(in), "many")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != want {
		t.Fatalf("%d results, want %d", len(rs), want)
	}
}

// TestReadersLinear: reading fio's text or JSON output of 10 times the
// jobs takes about 10 times the work, and one run per job (many "fio-"
// version lines) too.
func TestReadersLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("reads inputs of thousands of items several times to compare the work (seconds on a busy machine); skipped under -short")
	}
	runs := func(n int) []byte { // n runs of one job each
		one := manyText(t, 1)
		return bytes.Repeat(one, n)
	}
	for _, tc := range []struct {
		name string
		n    int
		in   func(int) []byte
	}{
		{"text", 100, func(n int) []byte { return manyText(t, n) }},
		{"text, a run per job", 100, runs},
		{"JSON", 300, manyJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ins := map[int][]byte{tc.n: tc.in(tc.n), 10 * tc.n: tc.in(10 * tc.n)}
			scaletest.Linear(t, tc.name, tc.n, func(n int) { readAll(t, ins[n], n) })
		})
	}
}

// TestTooManyJobs: fio output of more than result.MaxResults jobs is
// refused as such, text or JSON, and the JSON before its jobs are
// decoded.
func TestTooManyJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 100,001 jobs (a few seconds); skipped under -short")
	}
	// fio's text output names each job's options in a header line
	// first: headers alone count.
	var headers bytes.Buffer
	for i := range result.MaxResults + 1 {
		fmt.Fprintf(&headers, "job%d: (g=0): rw=read, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=1\n", i)
	}
	for name, in := range map[string][]byte{"text": headers.Bytes(), "JSON": manyJSON(result.MaxResults + 1)} {
		_, err := ReadResults(bytes.NewReader(in), "many")
		var tm *result.TooManyError
		if !errors.As(err, &tm) || tm.What != "fio jobs" {
			t.Errorf("%s of %d jobs: %v, want a TooManyError of fio jobs", name, result.MaxResults+1, err)
		}
	}
}

// TestTopLevelEntries counts the objects of a document's top-level
// arrays only, whatever the strings and nesting hold.
func TestTopLevelEntries(t *testing.T) {
	for in, want := range map[string]int{
		`{"jobs":[]}`:                                     0,
		`{"jobs":[{"a":{"b":[{},{}]}},{}]}`:               2,
		`{"jobs":[{"s":"{[\"{"}],"disk_util":[{},{}]}`:    3,
		`{"global options":{"x":[{}]},"jobs":[{},{},{}]}`: 3,
		`{"jobs":[1,2,{}]}`:                               1,
	} {
		if got := topLevelEntries([]byte(in)); got != want {
			t.Errorf("%s: %d, want %d", in, got, want)
		}
	}
}

// BenchmarkReadText reads fio's text output of 4 jobs (a normal run),
// and of 10, 100 and 1,000 times as many.
func BenchmarkReadText(b *testing.B) {
	scaletest.Bench(b, 4, "job", func(n int) func() {
		in := manyText(b, n)
		return func() { readAll(b, in, n) }
	})
}

// BenchmarkReadJSON reads fio's JSON output of 4 jobs in their own
// groups, and of 10, 100 and 1,000 times as many.
func BenchmarkReadJSON(b *testing.B) {
	scaletest.Bench(b, 4, "job", func(n int) func() {
		in := manyJSON(n)
		return func() { readAll(b, in, n) }
	})
}
