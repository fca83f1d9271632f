package coldread

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// Samples lie inside their files, aligned to the block, one per MiB of a
// file at most, spread over every file in proportion to its size.
func TestPick(t *testing.T) {
	files := []file{{"a", 64 << 20}, {"b", 8192}, {"c", 3<<20 + 4096}}
	var total int64
	for _, f := range files {
		total += f.size
	}
	ss := pick(files, total, 1000, 4096, rand.New(rand.NewPCG(1, 2)))
	if len(ss) < 40 || len(ss) > 64+1+4 {
		t.Fatalf("%d samples, want about one per MiB (at most 69)", len(ss))
	}
	seen := map[[2]int64]bool{}
	for _, s := range ss {
		f := files[s.f]
		if s.off%4096 != 0 || s.off < 0 || s.off+4096 > f.size {
			t.Errorf("sample %+v outside %s (%d bytes) or not aligned", s, f.path, f.size)
		}
		k := [2]int64{int64(s.f), s.off / spacingBytes}
		if seen[k] {
			t.Errorf("two samples in one MiB of %s: %+v", f.path, s)
		}
		seen[k] = true
	}
}

// A block is slow when its first read takes more than 3 times the second
// reads' median and more than their p99; the verdict says cold above 10%
// of blocks, with both levels, the time to warm and the command.
func TestPhaseAndVerdict(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * 1e6) }
	var first, second pass
	for i := 0; i < 100; i++ {
		f := ms(1.1)
		if i%10 != 0 { // 90 cold blocks
			f = ms(17)
		}
		first.lat = append(first.lat, f)
		second.lat = append(second.lat, ms(1+float64(i%5)*0.05))
	}
	first.took, second.took = 2*time.Second, 110*time.Millisecond
	p := phase(1, first, second, 4096)
	if p.Slow != 90 || p.First.MedianNs != 17e6 || p.Second.MedianNs != 1.1e6 || p.First.IOPS != 50 {
		t.Fatalf("phase %+v", p)
	}
	r := &Report{Dir: "/data/it's", DataBytes: 100 << 30, BlockBytes: 4096, QD1: p, Deep: p, SlowShare: 0.9, Cold: true}
	r.Deep.QD, r.Deep.First.BWBytes = 32, 10e6
	r.WarmSeconds = float64(r.DataBytes) / r.Deep.First.BWBytes
	r.WarmCommand = "fio --opendir=" + shellQuote(r.Dir)
	v := strings.Join(verdict(r), "\n")
	for _, want := range []string{"cold: 90% of sampled blocks slow on first read (17 ms against 1.1 ms)", "at QD32 (10.0 MB/s): about 2.98 h", `--opendir='/data/it'\''s'`} {
		if !strings.Contains(v, want) {
			t.Errorf("verdict lacks %q:\n%s", want, v)
		}
	}
	r.Cold, r.SlowShare = false, 0.02
	if v := verdict(r); len(v) != 1 || !strings.HasPrefix(v[0], "warm: 2% of") {
		t.Errorf("warm verdict %q", v)
	}
}
