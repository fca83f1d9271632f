package watch

import (
	"bytes"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// TestClusterTable reads two nodes' pod logs (with a line that is not a
// record) and prints the table with the pod doing the IO.
func TestClusterTable(t *testing.T) {
	logs := map[string]string{
		"node-a": `{"schema":"iolens.watch/v1","type":"start","time":"2026-01-01T00:00:00Z","t_s":0,"start":{"interval_s":1,"devices":[{"name":"vdb","maj_min":"253:16","parallel":true}]}}
not json: a warning printed by something
{"schema":"iolens.watch/v1","type":"sample","time":"2026-01-01T00:00:01Z","t_s":1,"devices":[{"device":"vdb","state":"stalled","t_s":1,"r_s":0,"w_s":0,"r_bytes_s":0,"w_bytes_s":0,"r_await_ms":0,"w_await_ms":0,"aqu_sz":9,"rareq_bytes":0,"wareq_bytes":0,"util_pct":100,"in_flight":9}],"top":[{"device":"vdb","cgroup":"/kubepods/besteffort/podx/y","r_s":0,"w_s":120,"r_bytes_s":0,"w_bytes_s":491520,"namespace":"db","pod":"postgres-0"}]}
{"schema":"iolens.watch/v1","type":"finding","time":"2026-01-01T00:00:01Z","t_s":1,"finding":{"device":"vdb","phase":"start","kind":"stall","severity":"fail","summary":"stall started: 0 completions/s with aqu-sz 9.0"}}
`,
		"node-b": `{"schema":"iolens.watch/v1","type":"sample","time":"2026-01-01T00:00:01Z","t_s":1,"devices":[{"device":"sda","state":"ok","t_s":1,"r_s":10,"w_s":0,"r_bytes_s":40960,"w_bytes_s":0,"r_await_ms":1,"w_await_ms":0,"aqu_sz":0,"rareq_bytes":4096,"wareq_bytes":0,"util_pct":1,"in_flight":0}]}
`,
	}
	st := &ClusterState{samples: map[string]result.WatchRecord{}, errs: map[string]string{"node-c": "pod not ready"}}
	for node, l := range logs {
		ReadStream(strings.NewReader(l), func(r result.WatchRecord) { st.Add(node, r) })
	}
	var out bytes.Buffer
	WriteCluster(&out, st, false)
	got := out.String()
	for _, want := range []string{
		"node-a  vdb     stalled",
		"db/postgres-0",
		"node-b  sda     ok",
		"node-c  -       no data",
		"node-a  ",
		"stall started",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}
