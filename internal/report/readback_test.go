package report

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/iolens/iolens/internal/diagnosis"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
)

func fioTestdata(t testing.TB, name string) []result.Result {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "fio", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs, err := ReadResults(f, name)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// Every file iolens writes opens again: diagnose -o json, the NDJSON of
// history export, and a watch log, each with its own verdict; compare -o
// json says which command makes it.
func TestDiagnoseJSONReadsBack(t *testing.T) {
	rs := fioTestdata(t, "steadystate_iops20pct.json")
	analysis.Annotate(rs)
	var buf bytes.Buffer
	if err := WriteDiagnosis(&buf, "json", given(rs, diagnosis.Saved(rs)), false); err != nil {
		t.Fatal(err)
	}
	back, err := ReadResults(&buf, "d.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(rs) {
		t.Fatalf("%d results back, want %d", len(back), len(rs))
	}
	for i := range rs {
		if back[i].Test.Name != rs[i].Test.Name || len(back[i].Findings) != len(rs[i].Findings) || (back[i].Read == nil) != (rs[i].Read == nil) {
			t.Errorf("result %d: %s with %d findings, want %s with %d", i, back[i].Test.Name, len(back[i].Findings), rs[i].Test.Name, len(rs[i].Findings))
		}
	}
	var out bytes.Buffer
	if err := Text(&out, diagnosis.Replay(back)); err != nil {
		t.Fatal(err)
	}
	if want := diagnosis.Saved(rs).Verdict; len(want) == 0 || !strings.Contains(out.String(), termLines(want[0], termWidth)[0]) {
		t.Errorf("the report of the read-back diagnosis lacks its verdict %q:\n%s", want, out.String())
	}
}

func TestHistoryExportReadsBack(t *testing.T) {
	rs := fioTestdata(t, "client_server_2hosts.json")
	analysis.Annotate(rs)
	var buf bytes.Buffer
	if err := NDJSON(&buf, rs); err != nil {
		t.Fatal(err)
	}
	back, err := ReadResults(&buf, "export.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := Text(&a, diagnosis.Replay(rs)); err != nil {
		t.Fatal(err)
	}
	if err := Text(&b, diagnosis.Replay(back)); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("the exported results report differently:\n%s\n---\n%s", a.String(), b.String())
	}
	// The servers are named in the rows.
	for _, h := range []string{"host 127.0.0.1:18766", "host 127.0.0.1:18765"} {
		if !strings.Contains(b.String(), h) {
			t.Errorf("no row for %s:\n%s", h, b.String())
		}
	}
}

func TestWatchLogReport(t *testing.T) {
	var log strings.Builder
	log.WriteString(`{"schema":"iolens.watch/v1","type":"start","time":"2026-01-01T00:00:00Z","t_s":0,"host":"node1","start":{"interval_s":1,"devices":[{"name":"vdb","maj_min":"252:16","parallel":true}]}}` + "\n")
	for i, w := range []float64{100, 300, 200} {
		fmt.Fprintf(&log, `{"schema":"iolens.watch/v1","type":"sample","time":"2026-01-01T00:00:0%dZ","t_s":%d,"devices":[{"device":"vdb","state":"ok","t_s":0,"r_s":10,"w_s":%g,"r_bytes_s":40960,"w_bytes_s":%g,"r_await_ms":0.5,"w_await_ms":2,"aqu_sz":1,"rareq_bytes":4096,"wareq_bytes":4096,"util_pct":50,"in_flight":1}]}`+"\n", i+1, i+1, w, w*4096)
	}
	log.WriteString(`{"schema":"iolens.watch/v1","type":"finding","time":"2026-01-01T00:00:03Z","t_s":3,"finding":{"device":"vdb","kind":"stall","code":"stall","severity":"warn","summary":"vdb: writes stalled for 1 s"}}` + "\n")
	rs, err := ReadResults(strings.NewReader(log.String()), "watch.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	analysis.Annotate(rs) // analyze keeps the watch's own findings
	var out bytes.Buffer
	if err := Text(&out, diagnosis.Replay(rs)); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	// Writes: 100, 300 and 200 a second: 200 mean, 300 peak.
	for _, want := range []string{"vdb over 3 s (3 samples): read 10 IOPS mean (peak 10)", "write 200 IOPS mean (peak 300), 0.8 MB/s (peak 1.2)",
		"util 50% mean", "WARN vdb: writes stalled for 1 s"} {
		if !strings.Contains(s, want) {
			t.Errorf("the watch report lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "0 CPUs") || strings.Contains(s, " OK ") {
		t.Errorf("the watch report shows an empty shell:\n%s", s)
	}
}

func TestCompareJSONSaysWhatReadsIt(t *testing.T) {
	for _, doc := range []string{
		"{\n  \"schema\": \"iolens.comparison/v1\",\n  \"operands\": [\"a\", \"b\"]\n}\n",
		"{\n  \"operands\": [\"a\", \"b\"],\n  \"alpha\": 0.05\n}\n", // before compare wrote its schema
	} {
		_, err := ReadResults(strings.NewReader(doc), "c.json")
		var de *result.DecodeError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "iolens compare") || !strings.Contains(de.Hint(), "'iolens compare' makes it again") {
			t.Errorf("compare's JSON: error %v", err)
		}
	}
}

// A diagnosis's results are read one at a time: a hostile document is
// refused, not held.
func TestDiagnosisDocumentRefusals(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{"{\n  \"schema\": \"iolens.diagnosis/v1\",\n  \"verdict\": []\n}\n", "a diagnosis without its results"},
		{"{\n  \"schema\": \"iolens.diagnosis/v1\",\n  \"results\": {}\n}\n", "not an array"},
		{"{\n  \"schema\": \"iolens.diagnosis/v1\",\n  \"results\": [{\"schema\":\"iolens.result/v9\"}]\n}\n", "iolens.result/v9"},
		{"{\n  \"schema\": \"iolens.other/v1\"\n}\n", "iolens.other/v1"},
		{"{\n  \"schema\": \"iolens.diagnosis/v1\",\n  \"results\": [\n", "EOF"},
	} {
		_, err := ReadResults(strings.NewReader(tt.doc), "d.json")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.doc, err, tt.want)
		}
	}
}
