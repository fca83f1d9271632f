package nfsstats

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/hint"
)

// testdata/proc/100 and 101 are two mountstats taken 10 s apart, in the
// kernel's statvers=1.1 format: an NFSv3 mount under fio (direct 1 MiB
// reads and writes), an idle NFSv4.2 mount, an SMB share and local
// filesystems. Expected figures are worked by hand from the counters.
var (
	fixture = Reader{ProcRoot: "testdata/proc", PID: 100}
	later   = Reader{ProcRoot: "testdata/proc", PID: 101}
	t0      = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
)

func TestFind(t *testing.T) {
	tests := []struct {
		path, mount, fstype string
		nfs, smb            bool
	}{
		{"/mnt/nfs3/fio/testfile", "/mnt/nfs3", "nfs", true, false},
		{"/mnt/nfs3", "/mnt/nfs3", "nfs", true, false},
		{"/mnt/nfs4/a/../b", "/mnt/nfs4", "nfs4", true, false},
		{"/mnt/smb/x", "/mnt/smb", "cifs", false, true},
		{"/mnt/nfs30", "/", "ext4", false, false},
		{"/var/lib", "/", "ext4", false, false},
	}
	for _, tc := range tests {
		m, err := fixture.Find(tc.path)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if m.MountPoint != tc.mount || m.FSType != tc.fstype || m.NFS() != tc.nfs || m.SMB() != tc.smb {
			t.Errorf("%s: %+v", tc.path, m)
		}
	}
}

func TestDiffNFSv3UnderLoad(t *testing.T) {
	a, err := fixture.Snapshot("/mnt/nfs3", t0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := later.Snapshot("/mnt/nfs3", t0.Add(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	r := Diff(a, b)
	if r.Remounted || r.Mount.Device != "192.0.2.10:/srv/data" {
		t.Fatalf("%+v", r)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: %g, want %g", what, got, want)
		}
	}
	// READ: 1,000 -> 3,000 requests, 2,003 more transmissions, response
	// time 4,000 -> 14,000 ms, execute 4,600 -> 15,400, queue 500 -> 900.
	rd := r.Op("READ")
	near("READ ops/s", rd.OpsPerSec, 200)
	near("READ RTT ms", rd.RTTMs, 5)
	near("READ exec ms", rd.ExecMs, 5.4)
	near("READ queue ms", rd.QueueMs, 0.2)
	near("READ recv B/s", rd.RecvBytesPerSec, 2000*(1048576+116)/10.0)
	if rd.Retrans != 3 || rd.Timeouts != 1 || rd.Errors != 0 {
		t.Errorf("READ retrans %d timeouts %d errors %d, want 3 1 0", rd.Retrans, rd.Timeouts, rd.Errors)
	}
	wr := r.Op("WRITE")
	near("WRITE ops/s", wr.OpsPerSec, 100)
	near("WRITE RTT ms", wr.RTTMs, 10)
	near("WRITE exec ms", wr.ExecMs, 10.4)
	if wr.Retrans != 2 || wr.Errors != 1 {
		t.Errorf("WRITE retrans %d errors %d, want 2 1", wr.Retrans, wr.Errors)
	}
	near("COMMIT ops/s", r.Op("COMMIT").OpsPerSec, 1)
	near("GETATTR ops/s", r.Op("GETATTR").OpsPerSec, 6)
	if r.Retrans != 5 || r.Timeouts != 1 {
		t.Errorf("mount retrans %d timeouts %d, want 5 1", r.Retrans, r.Timeouts)
	}
	// Server bytes: 1,000 -> 3,000 MiB read, 500 -> 1,500 MiB written.
	near("read B/s", r.ReadBytesPerSec, 2000*1048576/10.0)
	near("write B/s", r.WriteBytesPerSec, 1000*1048576/10.0)
	// Backlog 0 -> 3 over 3,127 sends.
	near("backlog", r.BacklogAvg, 3.0/3127)
	if r.Ops[0].Op != "READ" || r.Ops[1].Op != "WRITE" {
		t.Errorf("busiest first: %v %v", r.Ops[0].Op, r.Ops[1].Op)
	}
	if r.Op("SETATTR").OpsPerSec != 0 || len(r.Ops) != 4 {
		t.Errorf("idle operations listed: %+v", r.Ops)
	}
	// The record's form: what a result's client series holds.
	c := r.Sample(7.5)
	if c.T != 7.5 || c.ReadOpsPerSec != 200 || c.WriteOpsPerSec != 100 || c.ReadRTTMs != 5 || c.WriteExecMs != 10.4 ||
		c.ReadBWBytes != r.ReadBytesPerSec || c.Retrans != 5 || c.Timeouts != 1 || c.BacklogAvg != r.BacklogAvg {
		t.Errorf("client sample %+v", c)
	}
}

func TestDiffIdleNFSv4(t *testing.T) {
	a, err := fixture.Snapshot("/mnt/nfs4", t0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := later.Snapshot("/mnt/nfs4", t0.Add(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Ops) != 64 || a.Age != 86400*time.Second {
		t.Errorf("NFSv4.2 snapshot: %d ops, age %v", len(a.Ops), a.Age)
	}
	r := Diff(a, b)
	// Only the lease keep-alive ran: 6 SEQUENCE and 2 GETATTR.
	if len(r.Ops) != 2 || r.Op("SEQUENCE").OpsPerSec != 0.6 || r.Op("GETATTR").OpsPerSec != 0.2 || r.ReadBytesPerSec != 0 {
		t.Errorf("idle mount: %+v", r)
	}
	// Counters going back mean a remount: no rates from them.
	a.At = b.At.Add(10 * time.Second)
	if r := Diff(b, a); !r.Remounted || len(r.Ops) != 0 {
		t.Errorf("backwards counters: %+v", r)
	}
}

func TestSMBAndLocal(t *testing.T) {
	_, err := fixture.Snapshot("/mnt/smb", t0)
	var e *hint.Error
	if !errors.Is(err, ErrNoClientStats) || !errors.As(err, &e) || e.Hint() == "" {
		t.Errorf("SMB: %v", err)
	}
	if _, err := fixture.Snapshot("/", t0); err == nil || errors.Is(err, ErrNoClientStats) {
		t.Errorf("ext4: %v", err)
	}
	if _, err := fixture.Snapshot("/mnt/gone", t0); err == nil {
		t.Error("unknown mount accepted")
	}
	if _, err := (Reader{ProcRoot: "testdata/proc", PID: 999}).Find("/"); err == nil {
		t.Error("missing process accepted")
	}
}

func TestSample(t *testing.T) {
	// Sampling reads the same file each tick: rates are zero, and it
	// stops when the context ends.
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := fixture.Sample(ctx, "/mnt/nfs3", time.Millisecond, func(r Rates) {
		n++
		if len(r.Ops) != 0 {
			t.Errorf("unchanged counters gave rates: %+v", r.Ops)
		}
		if n == 3 {
			cancel()
		}
	})
	if err != nil || n < 3 {
		t.Errorf("sample: %v after %d ticks", err, n)
	}
}

// The kernel writes mountstats, but a sampler must not crash on a file
// it cannot parse: it returns an error.
func FuzzSnapshot(f *testing.F) {
	for _, p := range []string{"testdata/proc/100/mountstats", "testdata/proc/101/mountstats"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("device a mounted on /m with fstype nfs statvers=1.1\n\tage:\t1\n\tper-op statistics\n\tREAD: 1\n"))
	f.Add([]byte("device a mounted on /m with fstype nfs statvers=1.0\n\txprt:\tudp 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "7"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "7", "mountstats"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		r := Reader{ProcRoot: dir, PID: 7}
		m, err := r.Find("/m/x")
		if err != nil {
			return
		}
		a, err := r.Snapshot(m.MountPoint, t0)
		if err != nil {
			return
		}
		Diff(a, a)
	})
}
