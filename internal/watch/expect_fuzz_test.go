package watch

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/termtext"
	"github.com/iolens/iolens/internal/units"
)

// FuzzParseExpect: --expect, and the iolens.dev/expect annotation that
// anyone who may annotate a PV or a StorageClass writes. A ceiling that
// parses is finite, not negative, and has an IOPS or bandwidth figure.
func FuzzParseExpect(f *testing.F) {
	for _, s := range []string{"iops=500,bw=100MB", "iops=NaN", "bw=1e308", "iops=-1", "burst-iops=3500,burst-s=1800,iops=500",
		"azure:P10", "aws:gp3:iops=6000", "name=\x1b[2J,iops=1", "iops=500,bw=25M", "=", ",,,", "iops=1,iops=2"} {
		f.Add(s, "")
	}
	f.Add("azure:P10", "Standard_D4s_v3")
	f.Fuzz(func(t *testing.T, spec, vm string) {
		c, err := ParseExpect(spec, vm)
		if err != nil {
			return
		}
		for _, v := range []float64{c.IOPS, c.BWBytes, c.BurstIOPS, c.BurstBWBytes, c.BurstSeconds, c.VMIOPS, c.VMBWBytes} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("ParseExpect(%q) has %v: %+v", spec, v, c)
			}
		}
		if c.IOPS <= 0 && c.BWBytes <= 0 {
			t.Fatalf("ParseExpect(%q) has no ceiling: %+v", spec, c)
		}
	})
}

// FuzzReadStream: the watch log 'iolens k8s watch' reads from each pod.
// Whatever a pod prints, only watch records come through.
func FuzzReadStream(f *testing.F) {
	for _, s := range []string{
		`{"schema":"iolens.watch/v1","type":"sample","time":"2026-01-01T00:00:00Z","t_s":1,"devices":[{"device":"vdb","state":"ok"}]}` + "\n",
		`{"schema":"iolens.result/v2"}` + "\n" + "not json\n{\n",
		`{"schema":"iolens.watch/v1","devices":null}`,
		strings.Repeat("{", 1000),
		`{"schema":"iolens.watch/v1","type":"sample","time":"2026-01-01T00:00:00Z","t_s":1,"devices":[{"device":"vdb\nFORGED","state":"ok","util_pct":1e308,"r_s":-1}]}` + "\n",
		`{"schema":"iolens.watch/v1","type":"sample","time":"2026-01-01T00:00:00Z","t_s":1,"devices":[{"device":"vdb\u2028FORGED","state":"ok\rFORGED","util_pct":50}]}` + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n := 0
		ReadStream(bytes.NewReader(b), func(r result.WatchRecord) {
			n++
			if !result.IsWatch(r.Schema) {
				t.Fatalf("a record of schema %q came through", r.Schema)
			}
			// Every figure a pod sends is one a device gives, and no name
			// starts a line of the cluster view (issue 34.3, 34.6).
			for _, d := range r.Devices {
				if !units.PercentFigure.Known(d.UtilPct) || !units.IOPSFigure.Known(d.ReadIOPS) || termtext.HasBreak(d.Device) || termtext.HasBreak(d.State) {
					t.Fatalf("a row no device gives came through: %+v", d)
				}
			}
		})
		if n > bytes.Count(b, []byte("\n"))+1 {
			t.Fatalf("%d records from %d lines", n, bytes.Count(b, []byte("\n"))+1)
		}
	})
}
