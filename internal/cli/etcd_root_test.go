package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/etcdmetrics"
	"github.com/iolens/iolens/internal/etcdmetrics/etcdtest"
	"github.com/iolens/iolens/internal/realio"
	"github.com/iolens/iolens/internal/result"
)

// Tests against a real etcd (Debian's etcd-server) on loopback ports. The
// emulated-disk tests need root; the TLS and restart tests only etcd.

func needEtcd(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: starts a real etcd")
	}
	if why := etcdtest.Unavailable(); why != "" {
		t.Skip(why)
	}
}

// ramDir is a directory in memory (/dev/shm), so that the emulated disk
// behind it is as fast as this machine can be and only its cap differs.
func ramDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "iolens-etcd-test-")
	if err != nil {
		t.Skipf("no /dev/shm for a RAM-backed disk: %v", err)
	}
	realio.Cleanup(t, func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	return dir
}

// etcdOnEmulated starts etcd with its data on an emulated disk (backed by
// RAM) with the given caps, inside the disk's throttled cgroup.
func etcdOnEmulated(t *testing.T, name string, limits emulate.Limits) (*emulate.Disk, *etcdtest.Etcd) {
	t.Helper()
	d, err := emulate.Create(context.Background(), emulate.Spec{Name: name, Dir: ramDir(t), SizeBytes: 1 << 30, Limits: limits})
	if err != nil {
		t.Fatalf("emulate: %v", err)
	}
	realio.Cleanup(t, func() {
		if err := d.ForceDestroy(context.WithoutCancel(context.Background())); err != nil {
			t.Errorf("destroy: %v", err)
		}
	})
	// etcd stops (its cleanup runs first) before the disk goes.
	e := etcdtest.Start(t, etcdtest.Options{DataDir: filepath.Join(d.Mount, "etcd"), Command: d.Command})
	return d, e
}

// underLoad writes to etcd from 8 clients while f runs (at most
// perSecond puts a second, if not 0), and logs the rate of writes.
func underLoad(t *testing.T, e *etcdtest.Etcd, perSecond float64, f func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var puts int64
	var loadErr error
	start := time.Now()
	wg.Add(1)
	go func() {
		defer wg.Done()
		puts, loadErr = e.Load(ctx, 5*time.Minute, 8, perSecond)
	}()
	time.Sleep(2 * time.Second) // WAL segment allocated, writes flowing
	f()
	cancel()
	wg.Wait()
	if loadErr != nil {
		t.Fatalf("load: %v", loadErr)
	}
	t.Logf("load: %d puts in %.0f s (%.0f/s)", puts, time.Since(start).Seconds(), float64(puts)/time.Since(start).Seconds())
}

type etcdJSON struct {
	Verdict string
	Members []struct {
		Verdict, Error, Hint string
		Restarted            bool
		Over                 string
		WALFsync             *etcdmetrics.Judgement `json:"wal_fsync"`
	}
}

func runEtcdJSON(t *testing.T, args ...string) (etcdJSON, int, string) {
	t.Helper()
	out, errs, code := execute(t, append([]string{"etcd", "-o", "json"}, args...)...)
	var rep etcdJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("iolens etcd %v: exit %d, %v\n%s\n%s", args, code, err, out, errs)
	}
	if len(rep.Members) > 0 && rep.Members[0].WALFsync != nil {
		w := rep.Members[0].WALFsync
		t.Logf("WAL fsync: %s (%.0f fsyncs): %s", w.Verdict, w.Count, w.Reason)
	}
	return rep, code, errs
}

// A disk capped at 60 write IOPS fails etcd's WAL fsync verdict: with
// writers keeping etcd busy, every fdatasync waits for the throttle
// (1/60 s apart), so the p99 lies wholly above 16 ms, not just over the
// 10 ms limit. watch --etcd, running at the same time, finds it too.
func TestEtcdOnCappedDisk(t *testing.T) {
	realio.Real(t, emulate.Unavailable())
	needEtcd(t)
	d, e := etcdOnEmulated(t, "etcd-capped", emulate.Limits{WriteIOPS: 60})
	var rep etcdJSON
	var code int
	var watchOut string
	// As fast as the writers can: more fsyncs than the cap lets through.
	underLoad(t, e, 0, func() {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			watchOut, _, _ = execute(t, "watch", d.Device, "--etcd", e.ClientURL, "--etcd-window", "5s", "--duration", "12s", "-o", "ndjson", "--top", "0")
		}()
		rep, code, _ = runEtcdJSON(t, e.ClientURL, "--interval", "10s")
		wg.Wait()
	})
	m := rep.Members[0]
	if rep.Verdict != etcdmetrics.VerdictFail || m.WALFsync == nil || m.WALFsync.Verdict != etcdmetrics.VerdictFail || code != 1 {
		t.Fatalf("verdict %s, exit %d: %+v", rep.Verdict, code, m)
	}
	if lo := m.WALFsync.P99LowerNs; lo == nil || *lo < 16e6 {
		t.Errorf("p99's bucket starts at %v ns, want 16 ms or more (the cap spaces IOs 16.7 ms apart)", lo)
	}
	// watch: rows with the p99, and a finding that it is over the limit.
	var failRows int
	var finding bool
	sc := bufio.NewScanner(strings.NewReader(watchOut))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		r, err := result.DecodeWatch(sc.Bytes())
		if err != nil {
			t.Fatalf("watch record: %v", err)
		}
		for _, row := range r.Etcd {
			if row.Verdict == etcdmetrics.VerdictFail {
				failRows++
			}
		}
		if f := r.Finding; f != nil && f.Code == result.CodeEtcdFail && f.Phase == "start" {
			finding = true
			t.Logf("watch: %s %s", f.Device, f.Summary)
		}
	}
	if failRows == 0 || !finding {
		t.Errorf("watch --etcd: %d rows failing, finding %v:\n%s", failRows, finding, watchOut)
	}
}

// Uncapped, in memory, etcd passes. An uncapped emulated disk would be
// the closer control, but on a small shared machine its fdatasync p99
// moves with the other processes' CPU load (the loop device's and the
// journal's threads, and etcd's own timing from Go), from 1 to 16 ms in
// the same hour: its verdict says as much about the neighbours as about
// iolens. In a RAM-backed directory the fsyncs cost next to nothing, so
// anything but a pass would be iolens's error.
func TestEtcdInRAM(t *testing.T) {
	needEtcd(t)
	realio.Exclusive(t)
	e := etcdtest.Start(t, etcdtest.Options{DataDir: filepath.Join(ramDir(t), "etcd")})
	var rep etcdJSON
	var code int
	// Paced, so the writers leave the CPU to etcd on a 2-core machine.
	underLoad(t, e, 150, func() { rep, code, _ = runEtcdJSON(t, e.ClientURL, "--interval", "10s") })
	m := rep.Members[0]
	if m.WALFsync == nil || m.WALFsync.Verdict != etcdmetrics.VerdictPass || m.WALFsync.Count < 100 || code != 0 {
		t.Fatalf("verdict %s, exit %d: %+v", rep.Verdict, code, m.WALFsync)
	}
}

// etcd with client-certificate authentication: iolens etcd works with the
// right flags, and without them says which flag to set.
func TestEtcdTLS(t *testing.T) {
	realio.Long(t, "starts a real etcd")
	needEtcd(t)
	certs := etcdtest.NewCerts(t)
	e := etcdtest.Start(t, etcdtest.Options{TLS: certs})
	good := []string{"--cacert", certs.CA, "--cert", certs.ClientCert, "--key", certs.ClientKey}
	rep, code, errs := runEtcdJSON(t, append([]string{e.ClientURL, "--fail-on", "none"}, good...)...)
	if code != 0 || rep.Members[0].Error != "" || rep.Members[0].WALFsync == nil {
		t.Fatalf("with the right flags: exit %d %+v %s", code, rep.Members[0], errs)
	}
	// Without the scheme, TLS flags mean https, as etcdctl does.
	if rep, code, _ := runEtcdJSON(t, append([]string{strings.TrimPrefix(e.ClientURL, "https://"), "--fail-on", "none"}, good...)...); code != 0 || rep.Members[0].Error != "" {
		t.Errorf("host:port with TLS flags: exit %d %+v", code, rep.Members[0])
	}
	tests := []struct {
		name string
		args []string
		err  string
		hint string
	}{
		{"no CA", []string{"--cert", certs.ClientCert, "--key", certs.ClientKey}, "signed by a CA iolens does not trust", "set --cacert"},
		{"wrong CA", []string{"--cacert", certs.OtherCA, "--cert", certs.ClientCert, "--key", certs.ClientKey}, "does not trust", "did not sign"},
		{"no client certificate", []string{"--cacert", certs.CA}, "refused the TLS handshake", "set --cert and --key"},
		{"untrusted client certificate", []string{"--cacert", certs.CA, "--cert", certs.OtherClientCert, "--key", certs.OtherClientKey},
			"refused the TLS handshake", "--trusted-ca-file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, code, errs := runEtcdJSON(t, append([]string{e.ClientURL}, tc.args...)...)
			m := rep.Members[0]
			if code != 1 || m.Verdict != etcdmetrics.VerdictError || !strings.Contains(m.Error, tc.err) || !strings.Contains(m.Hint, tc.hint) {
				t.Errorf("exit %d, %s: %q (hint %q), want %q / %q; stderr %s", code, m.Verdict, m.Error, m.Hint, tc.err, tc.hint, errs)
			}
		})
	}
	// Plain HTTP to the TLS port; and in text, the hint is printed.
	out, _, code := execute(t, "etcd", strings.Replace(e.ClientURL, "https://", "http://", 1))
	if code != 1 || !strings.Contains(out, "use https://") {
		t.Errorf("http to a TLS port: exit %d\n%s", code, out)
	}
	// --insecure-skip-verify only when asked, and it says so.
	_, errs, code = execute(t, "etcd", e.ClientURL, "--insecure-skip-verify", "--cert", certs.ClientCert, "--key", certs.ClientKey, "--fail-on", "none")
	if code != 0 || !strings.Contains(errs, "not checked") {
		t.Errorf("--insecure-skip-verify: exit %d, %s", code, errs)
	}
}

// A member restarted between the two scrapes: iolens etcd says so and
// judges the time since the restart.
func TestEtcdRestartBetweenScrapes(t *testing.T) {
	realio.Long(t, "starts a real etcd")
	needEtcd(t)
	e := etcdtest.Start(t, etcdtest.Options{})
	for i := range 20 {
		if err := e.Put(context.Background(), "k", strings.Repeat("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	var out, errs string
	done := make(chan struct{})
	go func() {
		defer close(done)
		out, errs, _ = execute(t, "etcd", e.ClientURL, "--interval", "6s", "--fail-on", "none", "-o", "json")
	}()
	time.Sleep(2 * time.Second)
	e.Restart(t)
	if err := e.Put(context.Background(), "after", "restart"); err != nil {
		t.Fatal(err)
	}
	<-done
	var rep etcdJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errs)
	}
	if m := rep.Members[0]; !m.Restarted || m.Over != etcdmetrics.OverSinceRestart || m.Verdict == etcdmetrics.VerdictError {
		t.Errorf("restart not seen: %+v", m)
	}
}
