package promhist

import (
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/promhist/promtest"
	"github.com/iolens/iolens/internal/result"
)

// quiet is a node whose disk does the same modest IO every second, with
// little dirty memory: nothing to find.
func quiet(start time.Time, n int) *promtest.Synth {
	return &promtest.Synth{Instance: "node-1:9100", Start: start, Step: time.Second, N: n, Devices: []string{"sdb"}, CPUs: 2,
		Dev: func(string, int) promtest.Rates {
			return promtest.Rates{ReadIOPS: 200, WriteIOPS: 100, ReadBytes: 200 * 4096, WriteBytes: 100 * 4096, Util: 0.2, Queue: 1, ReadAwaitMs: 1, WriteAwaitMs: 2}
		},
		Host: func(int) promtest.HostRates {
			return promtest.HostRates{Iowait: 0.01, Dirty: 1 << 20, WB: 0, PressureShare: 0.01}
		},
	}
}

// set puts v into the named series at sample i.
func set(ss []*promtest.Series, name string, i int, v float64) {
	for _, s := range ss {
		if s.Labels["__name__"] == name {
			s.V[i] = v
		}
	}
}

// Issue 34.3: values no node gives (1e308, a negative gauge, a counter
// that jumps by an exabyte in a second) are unknown: no stall, no
// writeback storm, no figure in PiB; the interval is a gap that says why.
func TestImplausibleSamples(t *testing.T) {
	start := date("2026-03-01T14:00:00Z")
	o := Options{From: start, To: start.Add(299 * time.Second)}
	base, _, err := analyzeFake(t, quiet(start, 300).Build(), o)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(base.Nodes[0].Findings) + len(base.Nodes[0].Gaps); n != 0 {
		logVerdict(t, base)
		t.Fatalf("the quiet node has %d findings and gaps", n)
	}
	for _, c := range []struct {
		name string
		edit func([]*promtest.Series)
	}{
		{"IOs completed 1e308 once ([fail] stall on main)", func(ss []*promtest.Series) {
			set(ss, "node_disk_reads_completed_total", 100, 1e308)
			set(ss, "node_disk_writes_completed_total", 100, 1e308)
		}},
		{"writeback 1e308 for a minute (16384.0 PiB storm on main)", func(ss []*promtest.Series) {
			for i := 100; i < 160; i++ {
				set(ss, "node_memory_Writeback_bytes", i, 1e308)
			}
		}},
		{"reads completed 1e308", func(ss []*promtest.Series) { set(ss, "node_disk_reads_completed_total", 100, 1e308) }},
		{"io time 1e308", func(ss []*promtest.Series) { set(ss, "node_disk_io_time_seconds_total", 100, 1e308) }},
		{"dirty memory 1e308", func(ss []*promtest.Series) {
			for i := 100; i < 160; i++ {
				set(ss, "node_memory_Dirty_bytes", i, 1e308)
			}
		}},
		{"writeback -5", func(ss []*promtest.Series) { set(ss, "node_memory_Writeback_bytes", 100, -5) }},
		{"bytes written jump by 1e17", func(ss []*promtest.Series) {
			for _, s := range ss {
				if s.Labels["__name__"] == "node_disk_written_bytes_total" {
					for i := 100; i < len(s.V); i++ {
						s.V[i] += 1e17
					}
				}
			}
		}},
		{"io now 1e308", func(ss []*promtest.Series) { set(ss, "node_disk_io_now", 100, 1e308) }},
		{"timestamp-sized cpu", func(ss []*promtest.Series) { set(ss, "node_cpu_seconds_total", 100, 1e308) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			ss := quiet(start, 300).Build()
			c.edit(ss)
			a, _, err := analyzeFake(t, ss, o)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			Text(&b, a, time.UTC)
			text := b.String()
			for _, kind := range []string{result.KindStall, result.KindWriteback, result.KindCliff} {
				if f := findingsOf(a, kind); len(f) > 0 {
					t.Errorf("a %s finding from a value no node gives: %+v\n%s", kind, f, text)
				}
			}
			if strings.Contains(c.name, "jump") && !strings.Contains(text, "figures no disk gives") {
				t.Errorf("the interval of the jump is not a gap that says why:\n%s", text)
			}
			for _, w := range []string{"PiB", "TiB", "[fail]", "Inf", "NaN"} {
				if strings.Contains(text, w) {
					t.Errorf("the report says %q:\n%s", w, text)
				}
			}
		})
	}
}

// FuzzSampleValues puts any value into any series of a quiet node's
// history at one instant: what it reports holds no figure a node cannot
// give (Inf, NaN, petabytes) and no failure.
func FuzzSampleValues(f *testing.F) {
	for _, v := range []float64{1e308, -1, 1e17} {
		for series := range 12 {
			f.Add(uint8(series), uint8(20), v)
		}
	}
	start := date("2026-03-01T14:00:00Z")
	o := Options{From: start, To: start.Add(39 * time.Second)}
	f.Fuzz(func(t *testing.T, series, at uint8, v float64) {
		ss := quiet(start, 40).Build()
		s := ss[int(series)%len(ss)]
		if len(s.V) == 0 || s.Labels["__name__"] == "node_uname_info" {
			return
		}
		s.V[int(at)%len(s.V)] = v
		a, _, err := analyzeFake(t, ss, o)
		if err != nil {
			return
		}
		var b strings.Builder
		Text(&b, a, time.UTC)
		for _, w := range []string{"PiB", "[fail]", "Inf", "NaN"} {
			if strings.Contains(b.String(), w) {
				t.Fatalf("%s = %v at %d: the report says %q:\n%s", s.Labels["__name__"], v, at, w, b.String())
			}
		}
	})
}
