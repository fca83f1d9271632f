package diagnosis

import (
	"encoding/json"
	"strings"
	"testing"
)

// Issue 26.11: what was not measured is null in JSON, not a 0 that reads
// as a measurement; what was measured keeps its value.
func TestDirectionJSONNulls(t *testing.T) {
	b, err := json.Marshal(Disk{Read: &Direction{IOPS: 1000, BWBytes: 5e7}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"qd1_latency_ns":null`, `"qd1_p99_ns":null`, `"qd1_iops":null`, `"knee_qd":null`, `"iops":1000`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("no %s in %s", want, b)
		}
	}
	b, _ = json.Marshal(&Direction{IOPS: 1000, QD1LatencyNs: 70200, QD1P99Ns: 90000, QD1IOPS: 13963, KneeQD: 16})
	for _, want := range []string{`"qd1_latency_ns":70200`, `"qd1_iops":13963`, `"knee_qd":16`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("no %s in %s", want, b)
		}
	}
	var back Direction
	if err := json.Unmarshal(b, &back); err != nil || back.KneeQD != 16 || back.QD1LatencyNs != 70200 {
		t.Errorf("read back %+v, %v", back, err)
	}
}
