package metrics

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/metrics/pushtest"
	"github.com/iolens/iolens/internal/result"
	dto "github.com/prometheus/client_model/go"
)

// k8sResult is a result of 'iolens k8s run' for a class, size and node.
func k8sResult(class, node string, iops float64) result.Result {
	r := sample()
	r.RunID = "k8s-" + class + "-" + strconv.Itoa(int(iops))
	r.Target = result.Target{Kind: "k8s", Path: "/data", Labels: map[string]string{"k8s.storage-class": class, "k8s.node": node,
		"k8s.size-requested": "10Gi", "k8s.pod": "iolens-" + strconv.Itoa(int(iops))}}
	w := *r.Write
	w.IOPS = iops
	r.Write = &w
	return r
}

var pushKey = map[string]string{"node": "k8s.node", "size": "k8s.size-requested"}

// Results pushed to a real Pushgateway: one group per storage class, no
// run id, and a later run of a class replaces its figures instead of
// adding series.
func TestPush(t *testing.T) {
	url := pushtest.Start(t)
	ctx := context.Background()
	rs := []result.Result{k8sResult("premium", "n1", 2300), k8sResult("premium", "n2", 2100), k8sResult("standard", "n1", 500)}
	if err := Push(ctx, url, testBuild, groupBy(rs, "storage_class", "k8s.storage-class", pushKey)); err != nil {
		t.Fatal(err)
	}
	get := func() ([]byte, map[string]*dto.MetricFamily) {
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		if _, err := b.ReadFrom(resp.Body); err != nil {
			t.Fatal(err)
		}
		return b.Bytes(), parse(t, bytes.NewReader(b.Bytes()))
	}
	text, mfs := get()
	iops := func(mfs map[string]*dto.MetricFamily) map[string]float64 {
		out := map[string]float64{}
		for _, m := range mfs[nameIOPS].GetMetric() {
			l := labels(m)
			if l["run_id"] != "" {
				t.Errorf("pushed series with a run id: %v", l)
			}
			if l["job"] != PushJob {
				t.Errorf("job %q", l["job"])
			}
			out[l["storage_class"]+"/"+l["node"]+"/"+l["size"]] = m.GetGauge().GetValue()
		}
		return out
	}
	want := map[string]float64{"premium/n1/10Gi": 2300, "premium/n2/10Gi": 2100, "standard/n1/10Gi": 500}
	if got := iops(mfs); !equalFloats(got, want) {
		t.Errorf("pushed IOPS %v, want %v", got, want)
	}
	if mfs[nameBuildInfo] == nil || mfs["push_time_seconds"] == nil {
		t.Errorf("no build info or push time on the gateway")
	}
	checkLabels(t, "pushgateway", mfs)
	lint(t, "pushgateway", dropGatewayOwn(text))

	// The next run of premium, on n1 only: premium's group holds that run
	// alone; standard's is untouched.
	if err := Push(ctx, url, testBuild, groupBy([]result.Result{k8sResult("premium", "n1", 2500)}, "storage_class", "k8s.storage-class", pushKey)); err != nil {
		t.Fatal(err)
	}
	_, mfs = get()
	want = map[string]float64{"premium/n1/10Gi": 2500, "standard/n1/10Gi": 500}
	if got := iops(mfs); !equalFloats(got, want) {
		t.Errorf("after a second push: %v, want %v", got, want)
	}
}

// dropGatewayOwn keeps the pushed families: the gateway's own go_*,
// process_* and pushgateway_* are not iolens'.
func dropGatewayOwn(text []byte) []byte {
	var out bytes.Buffer
	skip := false
	for _, line := range strings.SplitAfter(string(text), "\n") {
		if strings.HasPrefix(line, "# HELP ") {
			name := strings.Fields(line)[2]
			skip = !strings.HasPrefix(name, "iolens_")
		}
		if !skip {
			out.WriteString(line)
		}
	}
	return out.Bytes()
}

func equalFloats(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestPushBadURL(t *testing.T) {
	err := Push(context.Background(), "http://127.0.0.1:1", testBuild, groupBy([]result.Result{sample()}, "storage_class", "k8s.storage-class", pushKey))
	var pe *PushError
	if err == nil || !errors.As(err, &pe) || pe.Hint() == "" {
		t.Errorf("push to a closed port: %v", err)
	}
}
