package metrics

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/metrics/pushtest"
	"github.com/iolens/iolens/internal/result"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"
)

// 'k8s run --push' sends what the run measured to a real Pushgateway, by
// storage class, without the run id.
func TestPushResults(t *testing.T) {
	url := pushtest.Start(t)
	mk := func(class, node string, iops float64) result.Result {
		return result.Result{Schema: result.SchemaV1, RunID: "20240501-120000-abcdef", Suite: "quick", Status: "ok", Repeat: 1,
			Test:   result.TestSpec{Name: "randread-4k"},
			Target: result.Target{Kind: "k8s", Path: "/data", Labels: map[string]string{"k8s.storage-class": class, "k8s.node": node, "k8s.size-requested": "100Gi"}},
			Start:  time.Unix(1714564800, 0), End: time.Unix(1714564860, 0),
			Read: &result.DirResult{IOPS: iops, BWBytes: iops * 4096}}
	}
	rs := []result.Result{mk("managed-premium", "aks-1", 5000), mk("managed-csi", "aks-1", 500)}
	if n, err := PushByStorageClass(context.Background(), url, Build{Version: "v1"}, rs); err != nil || n != 2 {
		t.Fatalf("pushed %d groups, %v; want 2", n, err)
	}
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, m := range mfs["iolens_test_io_operations_per_second"].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if l["run_id"] != "" || l["job"] != "iolens" || l["direction"] != "read" || l["size"] != "100Gi" {
			t.Errorf("labels %v", l)
		}
		got[l["storage_class"]+"@"+l["node"]] = m.GetGauge().GetValue()
	}
	if got["managed-premium@aks-1"] != 5000 || got["managed-csi@aks-1"] != 500 || len(got) != 2 {
		t.Errorf("pushed %v", got)
	}
	// Nothing to push, or no URL: nothing happens.
	if n, err := PushByStorageClass(context.Background(), "", Build{}, rs); err != nil || n != 0 {
		t.Error(n, err)
	}
	// A gateway that is gone: an error with a hint, after the results.
	_, err = PushByStorageClass(context.Background(), "http://127.0.0.1:1", Build{}, rs)
	if hint.Of(err) == "" {
		t.Errorf("push to a closed port: %v", err)
	}
}
