package report

import (
	"bytes"
	"compress/gzip"
	"github.com/iolens/iolens/internal/diagnosis"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/result"
)

// p15Run is a real diagnose run on an emulated Azure P15 (1,100 IOPS and
// 125 MB/s, bursting to 3,500 IOPS and 170 MB/s from a full bucket),
// analysed afresh as 'iolens analyze' would.
func p15Run(t *testing.T) []result.Result {
	t.Helper()
	return realRun(t, "diagnose-emulated-p15.ndjson.gz")
}

// realP30 is a real diagnose run on an emulated P30 with 2 ms of
// latency, whose curves bend gradually and which stalls.
func realP30(t *testing.T) []result.Result {
	t.Helper()
	return realRun(t, "diagnose-emulated-p30-latency.ndjson.gz")
}

// realRun reads a kept diagnose run and analyses it afresh.
func realRun(t *testing.T, name string) []result.Result {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ReadResults(bytes.NewReader(b), name)
	if err != nil {
		t.Fatal(err)
	}
	analysis.Annotate(rs)
	return rs
}

// section returns the lines of the text report's section title, up to
// the next blank line.
func section(txt, title string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(txt, "\n") {
		switch {
		case strings.HasPrefix(l, title):
			in = true
		case in && strings.TrimSpace(l) == "":
			return out
		case in:
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// The text report is read in ten seconds: a verdict of 3 to 5 lines
// with how sure each figure is beside it, what to change one short line
// each, and the findings once per story, without fio's internals (those
// are in --verbose).
func TestTextReadInTenSeconds(t *testing.T) {
	rs := p15Run(t)
	var buf bytes.Buffer
	if err := Text(&buf, diagnosis.Replay(rs)); err != nil {
		t.Fatal(err)
	}
	txt := buf.String()
	for _, l := range strings.Split(txt, "\n") {
		if n := len([]rune(l)); n >= 100 && !strings.HasPrefix(l, "  ") {
			continue
		} else if n >= 100 && strings.Contains(section(txt, "Verdict")[0], "") {
			if strings.Contains(strings.Join(section(txt, "Verdict"), "\n"), strings.TrimSpace(l)) {
				t.Errorf("a verdict line of %d characters: %s", n, l)
			}
		}
	}
	// A statement's later lines (a long one broken to fit a terminal) are
	// indented under its text.
	var verdict []string
	in := false
	for _, l := range strings.Split(txt, "\n") {
		switch {
		case strings.HasPrefix(l, "Verdict"):
			in = true
		case in && strings.TrimSpace(l) == "":
			in = false
		case in && strings.HasPrefix(l, "   ") && len(verdict) > 0:
			verdict[len(verdict)-1] += " " + strings.TrimSpace(l)
		case in:
			verdict = append(verdict, strings.TrimSpace(l))
		}
	}
	if len(verdict) < 3 || len(verdict) > 5 {
		t.Errorf("a verdict of %d lines:\n%s", len(verdict), strings.Join(verdict, "\n"))
	}
	for _, l := range verdict {
		if (strings.HasPrefix(l, "read:") || strings.HasPrefix(l, "write:")) && strings.Count(l, "±")+strings.Count(l, "no plateau") < 2 {
			t.Errorf("a figure without how sure it is: %s", l)
		}
	}
	change := section(txt, "To change")
	if len(change) == 0 {
		t.Errorf("no 'To change' section:\n%s", txt)
	}
	for _, l := range change {
		if len([]rune(l)) >= 100 {
			t.Errorf("a 'to change' line of %d characters: %s", len([]rune(l)), l)
		}
	}
	findings := section(txt, "Findings")
	d := diagnosis.Saved(rs)
	seen := map[string]bool{}
	for _, l := range findings {
		story, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(l, "WARN "), "FAIL "), ": ")
		if seen[story] {
			t.Errorf("%q has two lines:\n%s", story, strings.Join(findings, "\n"))
		}
		seen[story] = true
	}
	// One line per curve, the fsync story once, the steady state folded:
	// nothing else happened on this disk.
	if want := len(d.Curves) + 2; len(findings) != want {
		t.Errorf("%d finding lines, want %d (%d curves, etcd, steady state):\n%s", len(findings), want, len(d.Curves), strings.Join(findings, "\n"))
	}
	for _, internal := range []string{"total_ios", "fit residual", "sync.lat_ns"} {
		if strings.Contains(txt, internal) {
			t.Errorf("the report shows fio's internals (%q)", internal)
		}
	}
	buf.Reset()
	if err := TextVerbose(&buf, diagnosis.Replay(rs)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"total_ios=0", "fit residual", "Findings per test"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("--verbose lacks %q", want)
		}
	}
}

// A flat level at a catalog disk's burst rates is named as that burst
// (issue 36): the emulated P15 with a full bucket reads 3,500 IOPS and
// 170 MB/s, Azure P1 to P20's burst, not "a flat IOPS cap" matched to a
// disk that holds that much (gcp:pd-balanced:86GiB), and no "a larger
// disk" advice. With --expect azure:P15 the verdict says what it holds
// once its credits run out and how long they last, and the tests above
// its sustained ceiling make one line, not one each.
func TestBurstByName(t *testing.T) {
	rs := p15Run(t)
	d := diagnosis.Saved(rs)
	all := strings.Join(append(d.Verdict, d.ToChange...), "\n")
	if d.Disk.AtBurst == nil || !containsStr(append(d.Disk.AtBurstAlso, d.Disk.AtBurst.Disk), "azure:P15") {
		t.Fatalf("no burst named, or not P15's among them: %+v %v\n%s", d.Disk.AtBurst, d.Disk.AtBurstAlso, all)
	}
	if len(d.CatalogMatch) > 0 || strings.Contains(all, "looks like") || strings.Contains(all, "a larger disk") || strings.Contains(all, "flat IOPS cap") {
		t.Errorf("a burst read as what the disk holds: %v\n%s", d.CatalogMatch, all)
	}
	for _, want := range []string{"burst rates of azure:P1 to azure:P20", "--sustained"} {
		if !strings.Contains(all, want) {
			t.Errorf("lacks %q:\n%s", want, all)
		}
	}

	// The same run compared with azure:P15, as --expect labels it.
	c := limits.MustDefault()
	x, err := c.ParseExpectation("azure:P15", "", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		limits.Apply(&rs[i], x)
	}
	d = diagnosis.Saved(rs)
	all = strings.Join(append(d.Verdict, d.ToChange...), "\n")
	b := d.Disk.AtBurst
	if b == nil || b.Disk != "azure:P15" || len(d.Disk.AtBurstAlso) != 0 {
		t.Fatalf("at burst %+v also %v, want azure:P15 alone", b, d.Disk.AtBurstAlso)
	}
	// The bucket: (3,500 - 1,100) IOPS x 1,800 s; at about 3,500 IOPS it
	// lasts about 1,800 s.
	if b.BucketIOs != 2400*1800 || b.BaseIOPS != 1100 || b.LastsS < 1600 || b.LastsS > 2000 {
		t.Errorf("bucket %+v", b)
	}
	for _, want := range []string{"azure:P15's burst rates; it holds 1,100 IOPS, 125 MB/s once its credits run out", "min at this rate from full",
		"size for azure:P15's 1,100 IOPS after its burst"} {
		if !strings.Contains(all, want) {
			t.Errorf("lacks %q:\n%s", want, all)
		}
	}
	var buf bytes.Buffer
	if err := WriteDiagnosis(&buf, "text", given(rs, d), false); err != nil {
		t.Fatal(err)
	}
	txt := buf.String()
	if n := strings.Count(txt, limits.VerdictAbove); n != 1 {
		t.Errorf("%d lines above the ceiling, want one:\n%s", n, txt)
	}
	if strings.Contains(txt, "--until-steady") {
		t.Errorf("points to --until-steady, which diagnose lacks:\n%s", txt)
	}
}

func containsStr(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
