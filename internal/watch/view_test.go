package watch

import (
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

func TestEtcdLines(t *testing.T) {
	p99, lo, hi := 24e6, 16e6, 32e6
	r := &result.WatchRecord{Etcd: []result.WatchEtcd{
		{Endpoint: "https://10.0.0.1:2379", WindowS: 60, Fsyncs: 1234, P99Ns: &p99, P99LowerNs: &lo, P99UpperNs: &hi, Verdict: "fail"},
		{Endpoint: "https://10.0.0.2:2379", Verdict: "error", Error: "connection refused"},
		{Endpoint: "https://10.0.0.3:2379", WindowS: 60, Fsyncs: 10, P99Ns: &lo, P99LowerNs: &lo, Verdict: "fail"},
	}}
	out := strings.Join(EtcdLines(r, 200), "\n")
	for _, want := range []string{"WAL FSYNC P99", "24 ms (16-32)", "FAIL", "ERROR: connection refused", "> 16 ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if EtcdLines(&result.WatchRecord{}, 200) != nil {
		t.Error("rows without etcd")
	}
}
