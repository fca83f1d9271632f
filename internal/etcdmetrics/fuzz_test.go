package etcdmetrics

import (
	"encoding/json"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/units"
)

// FuzzParse feeds hostile exposition text through everything a scrape's
// body goes through: parse, judge, diff against a known page, window and
// JSON. Nothing may panic, a histogram that gets through must keep the
// format's rules, and the estimate must lie in the bucket it names.
func FuzzParse(f *testing.F) {
	real, err := os.ReadFile("testdata/etcd-3.4.23.metrics")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(real))
	f.Add(page)
	f.Add(strings.Replace(page, `le="0.002"} 2`, `le="0.002"} 1e308`, 1))
	f.Add(strings.Replace(page, "_sum 0.01", "_sum 1e308", 1))
	f.Add(strings.NewReplacer(`} 1`, `} 1e308`, `} 2`, `} 1e308`, `} 3`, `} 1e308`, "_count 3", "_count 1e308").Replace(page))
	f.Add(strings.Replace(page, `le="0.001"`, `le="-1"`, 2))
	f.Add(strings.Replace(page, `le="0.001"`, `le="NaN"`, 1))
	f.Add(page + "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds 1e300\n")
	f.Add("# TYPE etcd_disk_wal_fsync_duration_seconds histogram\netcd_disk_wal_fsync_duration_seconds_count 5\n")
	f.Add("\x00\xff# HELP\n{")
	base, err := Parse(strings.NewReader(page))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		s, err := Parse(strings.NewReader(body))
		if err != nil {
			return
		}
		for _, h := range []Histogram{s.WALFsync, s.BackendCommit} {
			checkHistogram(t, h)
			for _, l := range []Limit{WALFsyncLimit(), BackendCommitLimit()} {
				j := Judge(h, l)
				if _, ok := verdictRank[j.Verdict]; !ok || j.Reason == "" {
					t.Fatalf("verdict %q reason %q", j.Verdict, j.Reason)
				}
				if _, err := json.Marshal(j); err != nil {
					t.Fatalf("judgement does not encode: %v", err)
				}
				if l := j.line(); strings.Contains(l, "NaN") || strings.Contains(l, "Inf") || longNumber.MatchString(l) || strings.Contains(l, " -") {
					t.Fatalf("a figure no etcd gives printed: %q", l)
				}
			}
			if d, err := h.Sub(base.WALFsync); err == nil {
				for _, b := range d.Buckets {
					if b.Count < 0 {
						t.Fatalf("negative delta %+v", d)
					}
				}
			}
		}
		w := Window{Span: 1}
		w.Add(base)
		if v := w.Add(s); v.Ready {
			if _, err := json.Marshal(v.WAL); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// longNumber is a run of digits longer than any count or time etcd has.
var longNumber = regexp.MustCompile(`[0-9]{17}`)

func checkHistogram(t *testing.T, h Histogram) {
	t.Helper()
	if h.Total() > units.CountFigure.Max || h.Sum < 0 || h.Sum > 1e20 {
		t.Fatalf("total %v, sum %v: no etcd counts so", h.Total(), h.Sum)
	}
	n := len(h.Buckets)
	if n < 2 || !math.IsInf(h.Buckets[n-1].UpperBound, 1) {
		t.Fatalf("buckets %+v", h.Buckets)
	}
	for i, b := range h.Buckets {
		if math.IsNaN(b.Count) || math.IsInf(b.Count, 0) || b.Count < 0 {
			t.Fatalf("count %v", b.Count)
		}
		if i > 0 && (b.UpperBound <= h.Buckets[i-1].UpperBound || b.Count < h.Buckets[i-1].Count) {
			t.Fatalf("not in order: %+v", h.Buckets)
		}
	}
	e := h.Quantile(0.99)
	if h.Total() == 0 {
		return
	}
	switch {
	case math.IsNaN(e.Value):
		t.Fatalf("NaN estimate for %+v", h.Buckets)
	case math.IsInf(e.Upper, 1):
		if e.Value != e.Lower {
			t.Fatalf("overflow estimate %v, lower %v", e.Value, e.Lower)
		}
	case e.Value < e.Lower && !math.IsInf(e.Lower, -1) || e.Value > e.Upper+1e-12*math.Abs(e.Upper):
		t.Fatalf("estimate %v outside (%v, %v]", e.Value, e.Lower, e.Upper)
	}
}
