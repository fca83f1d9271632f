package watch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/realio"
	"github.com/iolens/iolens/internal/result"
)

// TestThrottleStallAndCliff runs plain fio in the background on a loop
// device whose write IOPS the kernel's block throttle (cgroup v1) caps,
// then squeezes the cap to 1 IOPS for 4 s (a stall held above the device,
// invisible in its queue) and later drops it for good (a cliff). watch
// must log the stall within 2 s of each change and place the cliff within
// 2 s of it. Root only; about 30 s.
func TestThrottleStallAndCliff(t *testing.T) {
	if testing.Short() {
		t.Skip("real IO test; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for a loop device and a blkio cgroup")
	}
	blkio := "/sys/fs/cgroup/blkio"
	if _, err := os.Stat(filepath.Join(blkio, "blkio.throttle.write_iops_device")); err != nil {
		t.Skip("needs cgroup v1 blkio throttling at " + blkio)
	}
	for _, b := range []string{"fio", "losetup"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skip(b + " not installed")
		}
	}
	// Alone: watch reads the machine's iowait and IO pressure too.
	realio.Exclusive(t)
	// The image lives in RAM (tmpfs) where there is one: the throttle's
	// 1,000 IOPS must be well below what the device does at QD1 on any
	// host, whatever the host's disk.
	dir := t.TempDir()
	if shm, err := os.MkdirTemp("/dev/shm", "iolens-watch-test-"); err == nil {
		dir = shm
		realio.Cleanup(t, func() { os.RemoveAll(shm) })
	}
	img := filepath.Join(dir, "disk.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 256<<20); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", "--direct-io=on", img).CombinedOutput()
	if err != nil {
		t.Skipf("no loop device: %v: %s", err, out)
	}
	loop := strings.TrimSpace(string(out))
	realio.Cleanup(t, func() {
		if out, err := exec.Command("losetup", "-d", loop).CombinedOutput(); err != nil {
			t.Errorf("detaching %s: %v: %s", loop, err, out)
		}
	})
	name := filepath.Base(loop)
	mm, err := os.ReadFile(filepath.Join("/sys/class/block", name, "dev"))
	if err != nil {
		t.Fatal(err)
	}
	majmin := strings.TrimSpace(string(mm))
	cg := filepath.Join(blkio, fmt.Sprintf("iolens-watch-test-%d", os.Getpid()))
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	realio.Cleanup(t, func() {
		// The cgroup goes once its processes have: fio is killed first
		// (cleanups run in reverse).
		for i := 0; i < 50; i++ {
			if b, _ := os.ReadFile(filepath.Join(cg, "cgroup.procs")); len(strings.TrimSpace(string(b))) > 0 {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			if err := os.Remove(cg); err == nil || os.IsNotExist(err) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("cgroup %s left behind", cg)
	})
	limit := func(iops int) time.Time {
		t.Helper()
		if err := os.WriteFile(filepath.Join(cg, "blkio.throttle.write_iops_device"), []byte(fmt.Sprintf("%s %d", majmin, iops)), 0o644); err != nil {
			t.Fatal(err)
		}
		return time.Now()
	}
	limit(1000)

	// Plain fio, in the throttled cgroup, in the background.
	fio := exec.Command("sh", "-c", `echo $$ > "$0/cgroup.procs" && exec fio --thread --name=w --filename="$1" --rw=randwrite --bs=4k --direct=1 --ioengine=psync --size=200M --time_based --runtime=60 --output=/dev/null`, cg, loop)
	// --thread keeps fio's job in the one process, so killing it ends
	// the IO; whatever else entered the cgroup is ours and goes too.
	if err := fio.Start(); err != nil {
		t.Fatal(err)
	}
	realio.Cleanup(t, func() {
		fio.Process.Kill()
		fio.Wait()
		b, _ := os.ReadFile(filepath.Join(cg, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})

	w, err := New(Config{Devices: []string{name}, Interval: time.Second, Host: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var recs []result.WatchRecord
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- w.Run(ctx, func(r result.WatchRecord) error {
			mu.Lock()
			recs = append(recs, r)
			mu.Unlock()
			return nil
		})
	}()
	time.Sleep(7 * time.Second)
	stallAt := limit(1)
	time.Sleep(4 * time.Second)
	resumeAt := limit(1000)
	time.Sleep(8 * time.Second)
	cliffAt := limit(250)
	time.Sleep(9 * time.Second)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	start := recs[0].Time
	axis := func(at time.Time) float64 { return at.Sub(start).Seconds() }
	var stallStart, stallEnd, cliff *result.WatchRecord
	var states []string
	for i := range recs {
		r := &recs[i]
		switch {
		case r.Type == result.WatchTypeSample:
			states = append(states, fmt.Sprintf("%.0f:%s:%.0f", r.T, r.Devices[0].State, r.Devices[0].WriteIOPS))
		case r.Finding != nil && r.Finding.Kind == "stall" && r.Finding.Phase == "start" && stallStart == nil:
			stallStart = r
		case r.Finding != nil && r.Finding.Kind == "stall" && r.Finding.Phase == "end" && stallEnd == nil:
			stallEnd = r
		case r.Finding != nil && r.Finding.Kind == "cliff" && cliff == nil:
			cliff = r
		}
	}
	t.Logf("t:state:w/s %s", strings.Join(states, " "))
	if stallStart == nil || stallEnd == nil {
		t.Fatalf("no stall logged; the cap went to 1 IOPS at t=%.1f s", axis(stallAt))
	}
	// Detection delay: when the record was emitted, against the change.
	if d := stallStart.Time.Sub(stallAt).Seconds(); d < 0 || d > 2 {
		t.Errorf("stall logged %.1f s after the cap dropped (t=%.1f), want within 2 s", d, axis(stallAt))
	}
	if d := *stallStart.Finding.StartS - axis(stallAt); d < -2 || d > 2 {
		t.Errorf("stall placed at t=%.1f, cap dropped at t=%.1f", *stallStart.Finding.StartS, axis(stallAt))
	}
	if d := stallEnd.Time.Sub(resumeAt).Seconds(); d < 0 || d > 2 {
		t.Errorf("stall end logged %.1f s after the cap was restored, want within 2 s", d)
	}
	if cliff == nil {
		t.Fatalf("no cliff logged; the cap dropped from 1000 to 250 at t=%.1f s", axis(cliffAt))
	}
	if d := *cliff.Finding.StartS - axis(cliffAt); d < -2 || d > 2 {
		t.Errorf("cliff placed at t=%.1f, cap dropped at t=%.1f", *cliff.Finding.StartS, axis(cliffAt))
	}
	t.Logf("stall: cap at t=%.2f, logged at t=%.2f (placed at %.0f); end: cap at t=%.2f, logged at t=%.2f; cliff: cap at t=%.2f, placed at %.0f, logged at t=%.2f",
		axis(stallAt), axis(stallStart.Time), *stallStart.Finding.StartS, axis(resumeAt), axis(stallEnd.Time),
		axis(cliffAt), *cliff.Finding.StartS, axis(cliff.Time))
}
