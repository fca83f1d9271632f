package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/realio"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
)

// TestMain lets tests run the test binary as the iolens command itself,
// so signals and exit codes are exercised as a user sees them.
func TestMain(m *testing.M) {
	if os.Getenv("IOLENS_TEST_MAIN") == "1" {
		os.Exit(Main(os.Args[1:]))
	}
	// Tests never ask a real cloud metadata address.
	os.Setenv(EnvNoMetadata, "1")
	// Runs save to the history by default: keep the tests' history in a
	// scratch database, never the user's.
	dbDir, err := os.MkdirTemp("", "iolens-cli-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv("IOLENS_DB", filepath.Join(dbDir, "history.db"))
	code := m.Run()
	os.RemoveAll(dbDir)
	os.Exit(code)
}

func iolensCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "IOLENS_TEST_MAIN=1")
	return cmd
}

// needFio skips without fio; the test runs real IO, so it also waits for
// other packages' IO timing tests (realio.Exclusive).
func needFio(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio is not installed: 'apt-get install fio' to run this test")
	}
	realio.Exclusive(t)
}

// execute runs a command in-process and returns stdout, stderr and the
// exit code main would use.
func execute(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := NewRootCommand(IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb})
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	code := ExitCode(err, false, &errb)
	return out.String(), errb.String(), code
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "--suite", "nope", dir}, 2, "valid suites: quick"},
		{[]string{"run", "-o", "xml", dir}, 2, "valid formats: text, json, ndjson, csv, md"},
		{[]string{"run", "--repeat", "0", dir}, 2, "--repeat"},
		{[]string{"run", "--device", "/dev/null", dir}, 2, "either DIR or --device"},
		{[]string{"run", "--destructive", dir}, 2, "--device only"},
		{[]string{"run", "--size", "lots", dir}, 2, "--size"},
		{[]string{"run", "--label", "novalue", dir}, 2, "key=value"},
		{[]string{"run", "--label", "expect=aws:io2:500GiB", dir}, 2, "say what the disk should be with --expect"},
		{[]string{"diagnose", "--label", "expect_vm=m5.large", dir}, 2, "iolens sets this label itself"},
		{[]string{"history", "import", "--label", "expect_source=imds", dir}, 2, "iolens sets this label itself"},
		{[]string{"run", "--fio", "/nonexistent/fio", dir}, 1, "fio not found: /nonexistent/fio does not exist"},
		{[]string{"run", "--fio", dir, dir}, 1, "is a directory"},
		{[]string{"run", "--fio", "no-such-fio-here", dir}, 1, "apt-get install fio"},
		{[]string{"run", "--no-such-flag"}, 2, "unknown flag"},
		{[]string{"suites", "nope"}, 2, "valid suites"},
		{[]string{"report", filepath.Join(dir, "missing.ndjson")}, 1, "no such file"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, stderr, code := execute(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit code = %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr does not mention %q:\n%s", tt.want, stderr)
			}
		})
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("bad input left files behind: %v", ents)
	}
}

func TestRunQuickEndToEnd(t *testing.T) {
	needFio(t)
	if testing.Short() {
		t.Skip("runs fio for about 20 s")
	}
	base := t.TempDir()
	target := filepath.Join(base, "target")
	out := filepath.Join(base, "results.ndjson")
	stdout, stderr, code := execute(t, "run", "--suite", "quick", "--runtime", "2", "--ramp", "0", "--size", "64M",
		"--out", out, "--label", "env=test", "-o", "json", "-q", "--create", target)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var rs []result.Result
	if err := json.Unmarshal([]byte(stdout), &rs); err != nil {
		t.Fatalf("-o json is not a JSON array of results: %v", err)
	}
	if len(rs) != 6 {
		t.Fatalf("%d results, want 6", len(rs))
	}
	for _, r := range rs {
		if r.Status != "ok" {
			t.Errorf("%s: %s %s", r.Test.Name, r.Status, r.Error)
			continue
		}
		d := r.Read
		if r.Test.Writes() {
			d = r.Write
		}
		if d == nil || d.IOPS <= 0 || d.Lat.N == 0 || d.Lat.P99Ns <= 0 || d.Hist.Count() == 0 {
			t.Errorf("%s: no measurement: %+v", r.Test.Name, d)
		}
		if r.Test.RuntimeS > 0 && len(r.FioSeries) == 0 {
			t.Errorf("%s: no fio time series", r.Test.Name)
		}
		if r.Target.Device != "" && (len(r.Devices) == 0 || len(r.Devices[0].Samples) == 0) {
			t.Errorf("%s: target on %s but no device samples", r.Test.Name, r.Target.Device)
		}
		if r.Target.Labels["env"] != "test" || r.Schema != result.Schema || len(r.FioJSON) == 0 || r.FioJob == "" {
			t.Errorf("%s: record incomplete (labels %v, schema %q)", r.Test.Name, r.Target.Labels, r.Schema)
		}
		if strings.Contains(r.FioJob, "gtod_reduce") {
			t.Errorf("%s: job uses gtod_reduce", r.Test.Name)
		}
	}
	if fs := rs[5]; fs.Sync == nil || fs.Sync.Lat.N == 0 {
		t.Errorf("fdatasync test has no sync latencies: %+v", fs.Sync)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("target directory iolens created was not removed: %v", err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved, err := report.ReadResults(f, out)
	if err != nil || len(saved) != 6 {
		t.Fatalf("--out file: %d results, %v", len(saved), err)
	}
	// The saved file re-renders.
	text, _, code := execute(t, "report", out)
	if code != 0 || !strings.Contains(text, "randread-4k-qd32") || !strings.Contains(text, "p99.9") {
		t.Errorf("report of saved results:\n%s", text)
	}
}

// A relative DIR, as "make run" passes, resolves against the working
// directory.
func TestRunRelativeDir(t *testing.T) {
	needFio(t)
	base := t.TempDir()
	t.Chdir(base)
	_, stderr, code := execute(t, "run", "--suite", "etcd", "--size", "64M", "-q", "--create", "scratch")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if ents, _ := os.ReadDir(base); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

func TestRunJobFileWithFailingSection(t *testing.T) {
	needFio(t)
	base := t.TempDir()
	job := filepath.Join(base, "j.fio")
	// The failing section reads data that was never written with verify
	// headers: it fails on any file system (a misaligned direct read,
	// bs=1000, fails on ext4 but not on a tmpfs).
	os.WriteFile(job, []byte("[global]\nioengine=libaio\ndirect=1\nsize=16m\nruntime=1\n[good]\nrw=randread\nbs=4k\n[unverified]\nrw=read\nbs=4k\nverify=crc32c\n"), 0o644)
	out := filepath.Join(base, "r.ndjson")
	stdout, stderr, code := execute(t, "run", "--job", job, "--out", out, "--size", "64M", "-q", base)
	if code != 3 {
		t.Fatalf("exit %d, want 3 (partial failure)\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "unverified") || !strings.Contains(stdout, "EILSEQ") {
		t.Errorf("report should name the failed test and its error:\n%s", stdout)
	}
	b, _ := os.ReadFile(out)
	if n := strings.Count(string(b), "\n"); n != 2 {
		t.Errorf("%d results kept, want 2 (one ok, one failed)", n)
	}
	ents, _ := os.ReadDir(base)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "iolens-") {
			t.Errorf("scratch directory %s left behind", e.Name())
		}
	}
}

// Ctrl-C in the middle of a test: fio stops, the results so far are kept,
// the scratch directory is removed and the exit code is 130.
func TestInterruptCleansUp(t *testing.T) {
	needFio(t)
	base := t.TempDir()
	target := filepath.Join(base, "t")
	out := filepath.Join(base, "r.ndjson")
	cmd := iolensCmd(t, "run", "--suite", "quick", "--runtime", "30", "--ramp", "0", "--size", "64M", "--out", out, "--create", target)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var seen []string
	started := false
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.Contains(sc.Text(), "[1/6]") {
			started = true
			break
		}
	}
	if !started {
		cmd.Process.Kill()
		t.Fatalf("test never started:\n%s", strings.Join(seen, "\n"))
	}
	time.Sleep(2 * time.Second)
	var scratch []string
	scratch, _ = filepath.Glob(filepath.Join(target, "iolens-*"))
	if len(scratch) != 1 {
		t.Errorf("scratch dirs while running: %v", scratch)
	}
	cmd.Process.Signal(os.Interrupt)
	go func() {
		for sc.Scan() {
		}
	}()
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit = %v, want 130", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		ents, _ := os.ReadDir(target)
		t.Errorf("target not cleaned up: %v", ents)
	}
	if len(scratch) == 1 && fioRunningOn(scratch[0]) {
		t.Error("fio still running after iolens exited")
	}
}

func fioRunningOn(path string) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte(path)) {
			return true
		}
	}
	return false
}
