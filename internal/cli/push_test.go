package cli

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/metrics/pushtest"
	"github.com/iolens/iolens/internal/result"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestCheckPushURL(t *testing.T) {
	for in, ok := range map[string]bool{"": true, "http://127.0.0.1:9091": true, "https://pgw.example.com": true,
		"127.0.0.1:9091": false, "ftp://x:1": false, "http://": false, "http://x:1/?a=b": false} {
		err := checkPushURL(in)
		var ue *UsageError
		if ok != (err == nil) || err != nil && !errors.As(err, &ue) {
			t.Errorf("checkPushURL(%q) = %v", in, err)
		}
	}
}

// Both k8s commands that run benchmarks take --push.
func TestPushFlag(t *testing.T) {
	root := NewRootCommand(IOStreams{})
	for _, path := range [][]string{{"k8s", "run"}, {"k8s", "node-check"}} {
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		if cmd.Flags().Lookup("push") == nil {
			t.Errorf("%s has no --push", strings.Join(path, " "))
		}
	}
}

// 'k8s run --push' sends what the run measured to a real Pushgateway, by
// storage class, without the run id.
func TestPushK8sResults(t *testing.T) {
	url := pushtest.Start(t)
	mk := func(class, node string, iops float64) result.Result {
		return result.Result{Schema: result.SchemaV1, RunID: "20240501-120000-abcdef", Suite: "quick", Status: "ok", Repeat: 1,
			Test:   result.TestSpec{Name: "randread-4k"},
			Target: result.Target{Kind: "k8s", Path: "/data", Labels: map[string]string{"k8s.storage-class": class, "k8s.node": node, "k8s.size-requested": "100Gi"}},
			Start:  time.Unix(1714564800, 0), End: time.Unix(1714564860, 0),
			Read: &result.DirResult{IOPS: iops, BWBytes: iops * 4096}}
	}
	var errOut bytes.Buffer
	rs := []result.Result{mk("managed-premium", "aks-1", 5000), mk("managed-csi", "aks-1", 500)}
	if err := pushK8sResults(context.Background(), &errOut, url, rs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "pushed 2 results to "+url) {
		t.Errorf("stderr: %q", errOut.String())
	}
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
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
	if err := pushK8sResults(context.Background(), &errOut, "", rs); err != nil {
		t.Error(err)
	}
	// A gateway that is gone: an error with a hint, after the results.
	err = pushK8sResults(context.Background(), &errOut, "http://127.0.0.1:1", rs)
	var he *hint.Error
	if !errors.As(err, &he) || he.Hint() == "" {
		t.Errorf("push to a closed port: %v", err)
	}
}
