package cli

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/iolens/iolens/internal/coldread"
	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/realio"
)

// deviceWrites is the writes-completed counter of dev in /proc/diskstats.
func deviceWrites(t *testing.T, dev string) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) > 9 && f[2] == dev {
			n, err := strconv.ParseUint(f[7], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("%s is not in /proc/diskstats", dev)
	return 0
}

type fileState struct {
	sum   [32]byte
	mtime time.Time
	size  int64
}

func filesState(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fileState{sha256.Sum256(b), fi.ModTime(), fi.Size()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A volume restored from a snapshot: each 64 KiB block takes 17 ms more
// on its first read, 1 ms once read. Sampled just after the data was
// written (warm), diagnose --existing says warm; once every block is cold
// again (a fresh restore) it says cold, with both levels, the time to warm
// and the command. Neither run writes: the files' contents and mtimes, and
// the device's count of writes, are what they were.
func TestDiagnoseExistingColdVolume(t *testing.T) {
	if testing.Short() {
		t.Skip("real IO on an emulated disk: not under -short")
	}
	realio.Real(t, emulate.Unavailable())
	ctx := context.Background()
	d, err := emulate.Create(ctx, emulate.Spec{Name: "dg-restored", Dir: t.TempDir(), SizeBytes: 1 << 30, RAM: true,
		Latency: &emulate.Latency{Read: emulate.Fixed(time.Millisecond)}, Cold: &emulate.Cold{Latency: 17 * time.Millisecond, BlockBytes: 64 << 10}})
	if err != nil {
		t.Fatalf("emulate: %v", err)
	}
	realio.Cleanup(t, func() {
		if err := d.ForceDestroy(context.Background()); err != nil {
			t.Errorf("destroy: %v", err)
		}
	})
	data := filepath.Join(d.Mount, "data")
	if err := os.MkdirAll(filepath.Join(data, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i, name := range []string{"a", "b", "sub/c", "sub/d"} {
		b := make([]byte, (24+8*i)<<20)
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		if err := os.WriteFile(filepath.Join(data, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	unix.Sync()
	time.Sleep(time.Second) // what the flusher was still doing, done
	dev := filepath.Base(d.Device)
	before, writes := filesState(t, data), deviceWrites(t, dev)

	run := func() coldread.Report {
		t.Helper()
		stdout, stderr, code := execute(t, "diagnose", "--existing", data, "--max-read", "16MiB", "-o", "json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var r coldread.Report
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		t.Logf("%s\nqd1 %+v\ndeep %+v", strings.Join(r.Verdict, "\n"), r.QD1, r.Deep)
		if r.ReadBytes > 16<<20 || r.ReadBytes == 0 || r.Files != 4 {
			t.Errorf("read %d bytes of %d files, want at most 16 MiB of 4", r.ReadBytes, r.Files)
		}
		return r
	}
	warm := run()
	if warm.Cold || warm.SlowShare > 0.05 || !strings.HasPrefix(warm.Verdict[0], "warm: ") {
		t.Errorf("freshly written data called cold: %.0f%% slow", warm.SlowShare*100)
	}
	if err := d.Arm(); err != nil {
		t.Fatal(err)
	}
	cold := run()
	if !cold.Cold || cold.SlowShare < 0.9 || !strings.HasPrefix(cold.Verdict[0], "cold: ") {
		t.Errorf("a restored volume: %.0f%% slow, verdict %q", cold.SlowShare*100, cold.Verdict)
	}
	// Each cold block takes 17 ms more than its 1 ms: a loaded machine
	// adds to both, never takes from them.
	if f, s := cold.QD1.First.MedianNs, cold.QD1.Second.MedianNs; f < 17e6 || s < 0.9e6 || f-s < 15e6 {
		t.Errorf("QD1 first read %.3g ms, second %.3g ms; want about 18 and 1", f/1e6, s/1e6)
	}
	if cold.WarmSeconds <= 0 || !strings.Contains(cold.WarmCommand, "--opendir="+data) || !strings.Contains(cold.WarmCommand, "--readonly") {
		t.Errorf("warm in %v s with %q", cold.WarmSeconds, cold.WarmCommand)
	}
	if w := deviceWrites(t, dev); w != writes {
		t.Errorf("%s completed %d writes while diagnose --existing read it", dev, w-writes)
	}
	after := filesState(t, data)
	for p, s := range before {
		if after[p] != s {
			t.Errorf("%s changed: %+v, was %+v", p, after[p], s)
		}
	}
}
