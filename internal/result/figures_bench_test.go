package result

import (
	"testing"
	"time"
)

// benchRecord is a run's record as iolens writes it: 600 one-second
// samples of fio, two devices and the host.
func benchRecord(b *testing.B) []byte {
	r := Result{RunID: "r1", Suite: "quick", Status: "ok", Test: TestSpec{Name: "randread-4k", RW: "randread", BlockSize: 4096, IODepth: 8, NumJobs: 1},
		Start: time.Unix(0, 0).UTC(), End: time.Unix(600, 0).UTC(),
		Read: &DirResult{IOPS: 1e4, BWBytes: 4e7, Lat: Latency{MeanNs: 800, MaxNs: 1e6}, Hist: HistogramOf(map[uint64]uint64{500: 10, 900: 100, 20000: 3})}}
	for i := range 600 {
		r.FioSeries = append(r.FioSeries, FioSample{T: float64(i), ReadIOPS: 1e4, ReadBWBytes: 4e7, ReadLatMeanNs: 800})
		r.System = append(r.System, SystemSample{T: float64(i), IowaitPct: 1, CPUBusyPct: 5})
	}
	for _, d := range []string{"vdb", "vda"} {
		s := DeviceSeries{Device: d, Role: "direct"}
		for i := range 600 {
			s.Samples = append(s.Samples, DeviceSample{T: float64(i), ReadIOPS: 1e4, ReadBWBytes: 4e7, ReadAwaitMs: 0.8, QueueSize: 8, UtilPct: 99, InFlight: 8})
		}
		r.Devices = append(r.Devices, s)
	}
	line, err := Marshal(&r)
	if err != nil {
		b.Fatal(err)
	}
	return line
}

// BenchmarkUnmarshal reads the record, its figures checked; beside
// BenchmarkCheckRecord it says what the check costs of a read.
func BenchmarkUnmarshal(b *testing.B) {
	line := benchRecord(b)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := Unmarshal(line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckRecord is the check alone.
func BenchmarkCheckRecord(b *testing.B) {
	r, err := Unmarshal(benchRecord(b))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := checkRecord(&r); err != nil {
			b.Fatal(err)
		}
	}
}
