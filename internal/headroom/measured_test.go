package headroom_test

import (
	"context"
	"errors"
	"math"
	"os"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/headroom"
	"github.com/iolens/iolens/internal/result"
)

// quickCapped is a run of the quick suite on an emulated disk capped at
// 3,000 IOPS and 80 MB/s per direction (the diagnosis package's
// fixture), labelled as k8s diagnose labels a class's volume.
func quickCapped(t *testing.T, class, runID, pv string, shift time.Duration) []result.Result {
	t.Helper()
	f, err := os.Open("../diagnosis/testdata/quick-3000iops-80MBps.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs, err := result.NewDecoder(f, "quick-3000iops-80MBps.ndjson", result.Formats{}).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		rs[i].RunID = runID
		rs[i].Start, rs[i].End = rs[i].Start.Add(shift), rs[i].End.Add(shift)
		l := map[string]string{}
		for k, v := range rs[i].Target.Labels {
			l[k] = v
		}
		l["k8s.storage-class"], l["k8s.pv"] = class, pv
		rs[i].Target.Labels = l
	}
	return rs
}

// TestMeasuredCaps: a class's caps from the history, as its diagnosis
// found them: the disk capped at 3,000 IOPS and 80 MB/s gives those; the
// latest run that found a cap comes first; a class never measured, or
// measured without a cap, gives none; the history's error is passed on.
func TestMeasuredCaps(t *testing.T) {
	ctx := context.Background()
	diagnose := func(rs []result.Result) diagnosis.Diagnosis { return diagnosis.Saved(rs) }
	history := map[string][]result.Result{
		"fast": append(quickCapped(t, "fast", "run-new", "pv-1", 0), quickCapped(t, "fast", "run-old", "pv-2", -48*time.Hour)...),
	}
	// A volume whose diagnosis finds no cap: only the etcd test of the
	// run (no curve to read a ceiling off).
	etcdOnly := func(class, runID string) []result.Result {
		var out []result.Result
		for _, r := range quickCapped(t, class, runID, "pv-3", 0) {
			if r.Sync != nil {
				out = append(out, r)
			}
		}
		return out
	}
	history["slow"] = etcdOnly("slow", "run-etcd")
	// The latest run found no cap; the one before did.
	history["fallback"] = append(etcdOnly("fallback", "run-etcd"), quickCapped(t, "fallback", "run-old", "pv-2", -48*time.Hour)...)
	results := func(_ context.Context, class string) ([]result.Result, error) {
		if class == "broken" {
			return nil, errors.New("database is locked")
		}
		return history[class], nil
	}
	measured := headroom.MeasuredCaps(results, diagnose)
	c, err := measured(ctx, "fast")
	if err != nil || c == nil {
		t.Fatalf("fast: %v, %v", c, err)
	}
	if c.Source != headroom.SourceHistory || math.Abs(c.IOPS/3000-1) > 0.03 || math.Abs(c.BWBytes/80e6-1) > 0.03 || c.Name != "measured by run run-new on "+history["fast"][0].End.UTC().Format("2006-01-02") {
		t.Errorf("fast: %+v; want about 3,000 IOPS and 80 MB/s, measured by run-new", c)
	}
	if c, err := measured(ctx, "fallback"); err != nil || c == nil || c.Name[:len("measured by run run-old")] != "measured by run run-old" {
		t.Errorf("fallback: %+v, %v; want run-old's caps", c, err)
	}
	for _, class := range []string{"slow", "never"} {
		if c, err := measured(ctx, class); c != nil || err != nil {
			t.Errorf("%s: %+v, %v; want no cap", class, c, err)
		}
	}
	if _, err := measured(ctx, "broken"); err == nil {
		t.Error("the history's error was lost")
	}
}
