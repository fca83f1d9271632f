package report

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/iolens/iolens/internal/diagnosis"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/result"
)

// diagnose -o json compacted with jq -c reads back as the indented one
// does (it was passed over as "another iolens record": no results).
func TestCompactDiagnoseJSONReadsBack(t *testing.T) {
	rs := fioTestdata(t, "steadystate_iops20pct.json")
	analysis.Annotate(rs)
	var buf, compact bytes.Buffer
	if err := WriteDiagnosis(&buf, "json", given(rs, diagnosis.Saved(rs)), false); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&compact, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	if bytes.Count(compact.Bytes(), []byte("\n")) != 0 {
		t.Fatal("not one line")
	}
	back, err := ReadResults(&compact, "d.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(rs) {
		t.Fatalf("%d results back, want %d", len(back), len(rs))
	}
	for i := range rs {
		if back[i].Test.Name != rs[i].Test.Name || len(back[i].Findings) != len(rs[i].Findings) {
			t.Errorf("result %d: %s with %d findings, want %s with %d", i, back[i].Test.Name, len(back[i].Findings), rs[i].Test.Name, len(rs[i].Findings))
		}
	}
}

// fio's own output read by report carries the findings analyze gives
// it: the etcd verdict of an fdatasync test first of all, and the write
// bounded by its sync.
func TestFioOutputGetsFindings(t *testing.T) {
	for _, name := range []string{"etcd_fdatasync.json", "fio-3.16_fdatasync_excerpt.txt"} {
		rs, err := ReadFilesContext(context.Background(), []string{filepath.Join("..", "fio", "testdata", name)}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var etcd, syncBound bool
		for _, f := range rs[0].Findings {
			etcd = etcd || f.Kind == analysis.KindEtcd
			syncBound = syncBound || strings.Contains(f.Summary, "each write and its fdatasync")
		}
		if !etcd || !syncBound {
			t.Errorf("%s: etcd verdict %v, write bounded by its sync %v; findings %+v", name, etcd, syncBound, rs[0].Findings)
		}
		d := diagnosis.Saved(rs)
		if !strings.Contains(strings.Join(d.Verdict, "\n"), "etcd") {
			t.Errorf("%s: verdict %q has no etcd line", name, d.Verdict)
		}
		// Read again by analyze: the same findings.
		again := append([]result.Result(nil), rs...)
		analysis.Annotate(again)
		if len(again[0].Findings) != len(rs[0].Findings) {
			t.Errorf("%s: analyze gives %d findings, report %d", name, len(again[0].Findings), len(rs[0].Findings))
		}
	}
}

// fio's text does not say whether a write went through the page cache:
// no "buffered IO" finding on it.
func TestDirectUnknownIsNotBuffered(t *testing.T) {
	// A random write on the disk model's curve, and a mixed test off it.
	for _, name := range []string{"text-3.6_crlf_msec_max.txt", "text-3.16_client_2hosts.txt"} {
		rs, err := ReadFilesContext(context.Background(), []string{filepath.Join("..", "fio", "testdata", name)}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := TextVerbose(&out, diagnosis.Replay(rs)); err != nil {
			t.Fatal(err)
		}
		if s := out.String(); strings.Contains(s, "through the page cache") || strings.Contains(s, "buffered") {
			t.Errorf("%s: a write of unknown direct= reported as buffered:\n%s", name, s)
		}
	}
}

// Seed 004's own output (fio 3.6 text of an etcd check, pasted without
// its header): report gives the etcd FAIL that analyze gives, and the
// write's limit counts the 4.09 ms sync that bounds each write.
func TestSeed004ReportIsAnalyze(t *testing.T) {
	p := filepath.Join("..", "..", "..", "shared", "seeds", "004_4a530ec4c34ee787.txt")
	rs, err := ReadFilesContext(context.Background(), []string{p}, nil, nil)
	if err != nil {
		t.Skip("seed 004 is not beside this checkout:", err)
	}
	var fail, bound bool
	for _, f := range rs[0].Findings {
		fail = fail || f.Kind == analysis.KindEtcd && f.Severity == analysis.SevFail
		bound = bound || strings.Contains(f.Summary, "the sync 4.09 ms")
	}
	if !fail || !bound {
		t.Errorf("etcd FAIL %v, write bounded by the 4.09 ms sync %v: %+v", fail, bound, rs[0].Findings)
	}
	if v := strings.Join(diagnosis.Saved(rs).Verdict, "\n"); !strings.Contains(v, "etcd FAIL") {
		t.Errorf("verdict %q", v)
	}
}

// A refusal of fio's text reaches the user with the text reader's own
// hint, not the decoder's list of formats.
func TestFioTextRefusalHint(t *testing.T) {
	rs := "x: (groupid=0, jobs=1): err= 0: pid=1: Mon Mar  9 10:00:31 2020\n  read : io=1KB; bw=1KB/s\n"
	_, err := ReadResults(strings.NewReader(rs), "t.txt")
	if err == nil || !strings.Contains(hint.Of(err), "whole and unedited") {
		t.Errorf("err %v, hint %q", err, hint.Of(err))
	}
}
