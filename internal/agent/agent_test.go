package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/k8s"
	"github.com/iolens/iolens/internal/realio"
	"github.com/iolens/iolens/internal/result"
	"golang.org/x/sys/unix"
)

// agentRecords runs the agent and reads back what it framed.
func agentRecords(t *testing.T, a *Agent) ([]k8s.Record, error) {
	t.Helper()
	var out bytes.Buffer
	err := a.Run(context.Background(), &out)
	var recs []k8s.Record
	fr := k8s.NewFrameReader(&out)
	for {
		rec, rerr := fr.Next()
		if rerr != nil {
			break
		}
		recs = append(recs, rec)
	}
	return recs, err
}

// node-check's agent checks a job file's extents against the node's free
// space before fio runs anything: filesize=, offsets and numjobs could
// otherwise fill the disk of the service it runs beside (etcd's, say).
func TestAgentRefusesJobPastFreeSpace(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\ncase \"$1\" in\n--version) echo fio-3.33; exit 0;;\n--enghelp=*) exit 0;;\nesac\necho \"$@\" >> '%s'\nexit 1\n", calls)
	if err := os.WriteFile(filepath.Join(bin, "fio"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	volume := filepath.Join(dir, "var-lib-etcd")
	if err := os.Mkdir(volume, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, job := range []string{
		"[w]\nfilename=x\nrw=write\nfilesize=1p\n",
		"[w]\nrw=write\nsize=1g\nnumjobs=64\noffset_increment=1t\n",
	} {
		t.Setenv("IOLENS_TEST_JOB", job)
		recs, err := agentRecords(t, &Agent{Dir: volume, JobEnv: "IOLENS_TEST_JOB", JobName: "j.fio", Repeat: 1, RunID: "r1"})
		if err == nil || len(recs) == 0 {
			t.Fatalf("%q: the agent accepted it", job)
		}
		last := recs[len(recs)-1]
		if last.Type != k8s.RecordDone || !strings.Contains(last.Error, "past the") && !strings.Contains(last.Error, "not enough free space") || last.Hint == "" {
			t.Errorf("%q: final record %+v", job, last)
		}
		if b, _ := os.ReadFile(calls); len(b) > 0 {
			t.Errorf("fio ran: %s", b)
		}
		if ents, _ := os.ReadDir(volume); len(ents) != 0 {
			t.Errorf("left on the volume: %v", ents)
		}
	}
}

// A Block-mode agent measures its device: a job section with size= runs
// on it, not in the pod's $TMPDIR.
func TestAgentBlockModeRunsOnDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to attach a loop device")
	}
	for _, tool := range []string{"losetup", "fio"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	// The lock first: a test that times out waiting for it must not
	// have attached a loop device its cleanup never detaches.
	realio.Exclusive(t)
	img := filepath.Join(t.TempDir(), "pv.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 64<<20); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).Output()
	if err != nil {
		t.Skipf("no loop device: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	realio.Cleanup(t, func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d: %v: %s", err, out)
		}
	})
	t.Setenv("IOLENS_TEST_JOB", "[w]\nrw=write\nbs=1m\nsize=8m\ndirect=1\n")
	t.Setenv("TMPDIR", t.TempDir())
	recs, err := agentRecords(t, &Agent{Device: dev, JobEnv: "IOLENS_TEST_JOB", JobName: "j.fio", Repeat: 1, RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	var res []result.Result
	for _, rec := range recs {
		if rec.Type == k8s.RecordResult {
			var r result.Result
			if err := json.Unmarshal(rec.Result, &r); err != nil {
				t.Fatal(err)
			}
			res = append(res, r)
		}
	}
	if len(res) != 1 || res[0].Status != "ok" || !strings.Contains(res[0].FioJob, "filename="+dev+"\n") || res[0].Target.Path != dev {
		t.Fatalf("results: %+v", res)
	}
	var st unix.Stat_t
	if err := unix.Stat(img, &st); err != nil {
		t.Fatal(err)
	}
	if st.Blocks*512 < 8<<20 {
		t.Errorf("the volume's image holds %d bytes: the 8 MiB write did not reach it", st.Blocks*512)
	}
}
