package analysis

import (
	"math/rand/v2"
	"testing"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/scaletest"
)

// randomCurves makes n curves of one run and target: random block sizes
// from a few, levels clustered so that many pairs match in MB/s, in IOPS
// or both, and kinds mixed (some not capped at all).
func randomCurves(rng *rand.Rand, n int) []Curve {
	sizes := []int64{4096, 4096, 8192, 16384, 65536, 1 << 20, 4100}
	kinds := []string{result.CodeIOPSCap, result.CodeBandwidthCap, result.CodeDevice}
	cs := make([]Curve, n)
	for i := range cs {
		bs := sizes[rng.IntN(len(sizes))]
		level := []float64{1000, 1020, 3000, 0, 1000 * 4096 / float64(bs), 250}[rng.IntN(6)] * (1 + 0.01*rng.Float64())
		bw := level * float64(bs)
		if rng.IntN(8) == 0 {
			bw = []float64{0, 4096e3, 4096e3 * 1.05}[rng.IntN(3)]
		}
		cs[i] = Curve{Key: CurveKey{RunID: "run", Target: "t", Dir: []string{"read", "write"}[rng.IntN(2)], BlockSize: bs, Random: rng.IntN(2) == 0},
			Kind: kinds[rng.IntN(len(kinds))], Why: "w", Level: level, LevelBW: bw}
	}
	return cs
}

// TestCrossSizesAsPairwise: the indexed crossSizes gives every curve the
// kind and reasons that comparing it with each other capped curve in
// order (crossOne, the plain reading) gives.
func TestCrossSizesAsPairwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	changed := 0
	for trial := 0; trial < 300; trial++ {
		cs := randomCurves(rng, 1+rng.IntN(40))
		want := make([]Curve, len(cs))
		copy(want, cs)
		for i := range want {
			if !isCapped(&cs[i]) {
				continue
			}
			var others []*Curve
			for j := range cs {
				if j != i {
					others = append(others, &cs[j]) // the kinds before crossing
				}
			}
			crossOne(&want[i], others)
		}
		m := Model{Curves: cs}
		crossSizes(&m)
		for i := range cs {
			if cs[i].Kind != want[i].Kind || cs[i].Why != want[i].Why {
				t.Fatalf("trial %d, curve %d (%s): got %s %q, want %s %q", trial, i, cs[i].Key, cs[i].Kind, cs[i].Why, want[i].Kind, want[i].Why)
			}
			if cs[i].Why != "w" {
				changed++
			}
		}
	}
	if changed == 0 {
		t.Fatal("no curve changed its kind: the test compares nothing")
	}
}

// TestCrossSizesLinear: one target's many capped curves (every block size
// at one IOPS cap, or one bandwidth cap) are compared in about n log n,
// not each with every other.
func TestCrossSizesLinear(t *testing.T) {
	for _, tc := range []struct {
		name string
		bw   bool
	}{{"iops cap", false}, {"bandwidth cap", true}} {
		t.Run(tc.name, func(t *testing.T) {
			scaletest.Linear(t, "crossSizes "+tc.name, 2000, func(n int) {
				cs := make([]Curve, n)
				for i := range cs {
					bs := int64(512 * (i + 1))
					level := 8000.0
					if tc.bw {
						level = 400e6 / float64(bs)
					}
					cs[i] = Curve{Key: CurveKey{RunID: "run", Target: "t", Dir: "read", BlockSize: bs, Random: true},
						Kind: result.CodeIOPSCap, Level: level, LevelBW: level * float64(bs)}
				}
				crossSizes(&Model{Curves: cs})
			})
		})
	}
}
