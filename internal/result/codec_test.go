package result

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"testing"
)

// Records written by iolens before v2 (iolens analyze --expect azure:P80
// of fio outputs of a QD sweep and an etcd test) read as v2: every
// finding gets the code its v1 form expressed, and the numeric verdict
// leaves the evidence.
func TestReadV1(t *testing.T) {
	want := map[string][]string{
		"qd1":            {CodeNotJudged, CodeBelowCeiling},
		"qd2":            {CodeNotJudged, CodeBelowCeiling},
		"qd4":            {CodeNotJudged, CodeDiskIOPS},
		"qd8":            {CodeNotJudged, CodeDiskIOPS},
		"qd16":           {CodeNotJudged, CodeAboveCeiling},
		"qd32":           {CodeNotJudged, CodeAboveCeiling},
		"qd64":           {CodeNotJudged, CodeSweepLatency, CodeAboveCeiling},
		"etcd-fdatasync": {CodeEtcdPass, CodeBelowCeiling},
	}
	for _, file := range []string{"testdata/v1.ndjson", "testdata/v1.json"} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := NewDecoder(f, file, Formats{}).ReadAll()
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if file == "testdata/v1.json" && len(rs) != 1 || file != "testdata/v1.json" && len(rs) != len(want) {
			t.Fatalf("%s: %d results", file, len(rs))
		}
		for _, r := range rs {
			if r.Schema != Schema {
				t.Errorf("%s %s: schema %q", file, r.Test.Name, r.Schema)
			}
			var codes []string
			for _, f := range r.Findings {
				codes = append(codes, f.Code)
				if _, ok := f.Evidence["verdict"]; ok {
					t.Errorf("%s %s: verdict still in evidence", file, r.Test.Name)
				}
			}
			if strings.Join(codes, ",") != strings.Join(want[r.Test.Name], ",") {
				t.Errorf("%s %s: codes %v, want %v", file, r.Test.Name, codes, want[r.Test.Name])
			}
			if d := r.Dir("read"); r.Test.Name != "etcd-fdatasync" && (d == nil || d.Lat.P99Ns <= 0) {
				t.Errorf("%s %s: no read p99", file, r.Test.Name)
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	f, _ := os.ReadFile("testdata/v1.ndjson")
	rs, err := NewDecoder(bytes.NewReader(f), "v1", Formats{}).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	for i := range rs {
		if err := enc.Encode(&rs[i]); err != nil {
			t.Fatal(err)
		}
	}
	first := buf.String()
	back, err := NewDecoder(&buf, "v2", Formats{}).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	for i := range back {
		enc.Encode(&back[i])
	}
	if buf.String() != first {
		t.Error("encoding is not stable over a round trip")
	}
	if !strings.HasPrefix(first, `{"schema":"iolens.result/v3"`) || strings.Count(first, "\n") != len(rs) {
		t.Errorf("not one v3 record per line: %.80s", first)
	}
	if back[0].Read.Hist.Count() != rs[0].Read.Hist.Count() || back[0].Read.Hist.Percentile(99) != rs[0].Read.Hist.Percentile(99) {
		t.Error("histogram changed over a round trip")
	}
}

// Every hostile input gets an error that names where it is, without
// reading more than a record's worth or panicking.
func TestDecodeHostile(t *testing.T) {
	v1, _ := os.ReadFile("testdata/v1.ndjson")
	line1 := string(v1[:bytes.IndexByte(v1, '\n')])
	cases := []struct {
		name, in, want string
	}{
		{"empty", "", "empty input"},
		{"blank", " \n\t\n", "empty input"},
		{"zeros", strings.Repeat("\x00", 1<<20), "neither iolens results"},
		{"garbage", "hello\nworld\n", "neither iolens results"},
		{"newer schema", line1 + "\n" + strings.Replace(line1, "result/v1", "result/v9", 1) + "\n", ":2: record has schema \"iolens.result/v9\""},
		{"array of junk", "[1,2]", "json"},
		{"array with newer schema", "[" + strings.Replace(line1, "result/v1", "result/v4", 1) + "]", "iolens.result/v4"},
		{"watch without samples", `{"schema":"iolens.watch/v1","type":"start","time":"2026-01-01T00:00:00Z","t_s":0}` + "\n", "no samples"},
	}
	for _, c := range cases {
		_, err := NewDecoder(strings.NewReader(c.in), "f", Formats{}).ReadAll()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.want)
		}
		var de *DecodeError
		if err != nil && (!errors.As(err, &de) || de.Hint() == "") {
			t.Errorf("%s: %T has no hint", c.name, err)
		}
	}
	var de *DecodeError
	_, err := NewDecoder(strings.NewReader(strings.Replace(line1, "result/v1", "result/v9", 1)), "f", Formats{}).ReadAll()
	if !errors.As(err, &de) || !errors.Is(err, errUnknownSchema) || !strings.Contains(de.Hint(), "newer iolens") {
		t.Errorf("newer schema: %v", err)
	}
}

// A line that is not a record is passed over, named, and the good
// records read: a byte order mark, a bare NaN, text, a line cut short at
// the end, two "schema" keys (the probe and the decoder would each see
// another), a bad histogram.
func TestDecodeSkips(t *testing.T) {
	v1, _ := os.ReadFile("testdata/v1.ndjson")
	line1 := string(v1[:bytes.IndexByte(v1, '\n')])
	nan := strings.Replace(line1, `"status":"ok"`, `"status":"ok","iops_nan":NaN`, 1)
	if nan == line1 {
		t.Fatal("fixture has no status to put a NaN beside")
	}
	twice := `{"schema":"iolens.other/v1","schema":"iolens.result/v1",` + line1[len(`{"schema":"iolens.result/v1",`):]
	if !strings.HasPrefix(line1, `{"schema":"iolens.result/v1",`) {
		t.Fatal("fixture does not start with its schema")
	}
	cases := []struct {
		name, in string
		good     int
		want     []string // the warnings, in order
	}{
		{"bom", "\xef\xbb\xbf" + line1 + "\n" + line1 + "\n", 2, []string{"f:1: a byte order mark"}},
		{"bare NaN on line 2", line1 + "\n" + nan + "\n" + line1 + "\n", 2, []string{"f:2: invalid character 'N'"}},
		{"not a record on line 3", line1 + "\n\n{\"a\":1}\n", 1, []string{"f:3: not an iolens record"}},
		{"cut short at the end", line1 + "\n" + line1[:100], 1, []string{"f:2: the file ends inside this line"}},
		{"two schemas", line1 + "\n" + twice + "\n", 1, []string{`f:2: two "schema" keys`}},
		{"bad histogram", line1 + "\n" + strings.Replace(line1, `"hist":{}`, `"hist":{"x":1}`, 1) + "\n", 1, []string{"f:2: histogram bin"}},
	}
	for _, c := range cases {
		var got []string
		d := NewDecoder(strings.NewReader(c.in), "f", Formats{})
		d.Skipped = func(e *DecodeError) { got = append(got, e.Error()) }
		rs, err := d.ReadAll()
		if err != nil || len(rs) != c.good {
			t.Errorf("%s: %d results, %v; want %d", c.name, len(rs), err, c.good)
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: warnings %q, want %q", c.name, got, c.want)
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], c.want[i]) {
				t.Errorf("%s: warning %q, want it to start %q", c.name, got[i], c.want[i])
			}
		}
	}
	// Nothing good at all is still an error, and the warning says why.
	var got []string
	d := NewDecoder(strings.NewReader(nan+"\n"), "f", Formats{})
	d.Skipped = func(e *DecodeError) { got = append(got, e.Error()) }
	if _, err := d.ReadAll(); err == nil || len(got) != 1 {
		t.Errorf("only a bad record: %v, warnings %q", err, got)
	}
}

// A record longer than the cap is refused with its line number, having
// held no more than the cap.
func TestDecodeLineCap(t *testing.T) {
	v1, _ := os.ReadFile("testdata/v1.ndjson")
	line1 := v1[:bytes.IndexByte(v1, '\n')+1]
	in := io.MultiReader(bytes.NewReader(line1), bytes.NewReader(line1), strings.NewReader(`{"schema":"iolens.result/v2","x":"`), zeros{})
	d := NewDecoder(in, "big.ndjson", Formats{})
	d.max = 64 << 10
	_, err := d.ReadAll()
	var tl *LineTooLongError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "big.ndjson:3:") {
		t.Errorf("error %v, want line 3 too long", err)
	}
	d = NewDecoder(io.MultiReader(strings.NewReader("["), bytes.NewReader(line1[:len(line1)-1]), strings.NewReader(","), strings.NewReader(`{"schema":"iolens.result/v2","x":"`), zeros{}), "big.json", Formats{})
	d.max = 64 << 10
	if _, err := d.ReadAll(); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("array: error %v", err)
	}
}

// zeros is an endless stream of 'a', like a hostile /dev/zero.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// Results and watch records can share a file, and foreign input goes to
// the converter it is given.
func TestDecodeMixedAndForeign(t *testing.T) {
	v1, _ := os.ReadFile("testdata/v1.ndjson")
	line1 := string(v1[:bytes.IndexByte(v1, '\n')])
	watch := `{"schema":"iolens.watch/v1","type":"start","time":"2026-01-01T00:00:00Z","t_s":0,"start":{"interval_s":1,"devices":[{"name":"vdc","maj_min":"252:32","parallel":true}]}}
{"schema":"iolens.watch/v1","type":"sample","time":"2026-01-01T00:00:01Z","t_s":1,"devices":[{"device":"vdc","state":"ok","t_s":0,"r_s":1,"w_s":2,"r_bytes_s":0,"w_bytes_s":0,"r_await_ms":0,"w_await_ms":0,"aqu_sz":0,"rareq_bytes":0,"wareq_bytes":0,"util_pct":0,"in_flight":0}]}
{"schema":"iolens.other/v1"}`
	rs, err := NewDecoder(strings.NewReader(line1+"\n"+watch+"\n"+line1+"\n"), "mixed", Formats{}).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || rs[0].Suite != "fio" || rs[1].Suite != "fio" || rs[2].Suite != "watch" {
		t.Errorf("got %d results", len(rs))
	}
	var got string
	fio := func(r io.Reader, name string) ([]Result, error) {
		b, _ := io.ReadAll(r)
		got = string(b)
		return []Result{{Test: TestSpec{Name: name}}}, nil
	}
	in := "note: a fio warning\n{\n  \"fio version\" : \"fio-3.33\"\n}\n"
	rs, err = NewDecoder(strings.NewReader(in), "out.json", Formats{Fio: fio}).ReadAll()
	if err != nil || len(rs) != 1 || got != in {
		t.Errorf("fio text first: %v, %d results, saw %q", err, len(rs), got)
	}
	in = "{\n  \"fio version\" : \"fio-3.33\"\n}\n"
	if _, err = NewDecoder(strings.NewReader(in), "out.json", Formats{Fio: fio}).ReadAll(); err != nil || got != in {
		t.Errorf("fio JSON first: %v, saw %q", err, got)
	}
}

func TestEncodeNamesBadField(t *testing.T) {
	r := Result{Test: TestSpec{Name: "t", RuntimeS: math.NaN()}}
	_, err := Marshal(&r)
	if err == nil || !strings.Contains(err.Error(), "test.runtime_s") {
		t.Errorf("error %v, want it to name test.runtime_s", err)
	}
	r = Result{Read: &DirResult{Lat: Latency{P99Ns: math.Inf(1)}}}
	if _, err := Marshal(&r); err == nil || !strings.Contains(err.Error(), "read.lat.p99_ns") {
		t.Errorf("error %v, want it to name read.lat.p99_ns", err)
	}
}

func TestDirs(t *testing.T) {
	r := Result{Write: &DirResult{IOPS: 2}, Sync: &DirResult{IOPS: 3}}
	var got []string
	for name, d := range r.Dirs() {
		got = append(got, name)
		if r.Dir(name) != d {
			t.Errorf("Dir(%s) differs", name)
		}
	}
	if strings.Join(got, ",") != "write,sync" {
		t.Errorf("Dirs = %v", got)
	}
}

// Records before v3 get what v3 keeps beside the figures from the fio
// document they carry: fio's CPU and each direction's total latency
// (qd1.json's job: usr 3.1% + sys 43.95%, lat_ns mean 81919.622506 over
// 24109 reads, as the file says).
func TestUpgradeLiftsFioFigures(t *testing.T) {
	f, _ := os.ReadFile("testdata/v1.ndjson")
	rs, err := NewDecoder(bytes.NewReader(f), "v1", Formats{}).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	if r.Schema != Schema || r.Fio == nil || math.Abs(r.Fio.CPUPct-47.05) > 1e-9 || r.Fio.Jobs != 1 {
		t.Fatalf("schema %s, fio %+v", r.Schema, r.Fio)
	}
	if r.Read.TotalLatMeanNs != 81919.622506 {
		t.Errorf("total latency mean = %v, want 81919.622506", r.Read.TotalLatMeanNs)
	}
}
