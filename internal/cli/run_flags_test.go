package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

// Numbers on run's flags are refused with the accepted range, before
// anything runs (issue 12: --runtime NaN was ignored, --runtime Inf
// reached fio, an overflowing --size became the default).
func TestRunRefusesBadNumbers(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--runtime", "NaN"}, 2, []string{"--runtime", "not a number", "want a duration"}},
		{[]string{"--runtime", "Inf"}, 2, []string{"--runtime", "not a number"}},
		{[]string{"--runtime", "+Inf"}, 2, []string{"--runtime"}},
		{[]string{"--runtime", "-1s"}, 2, []string{"--runtime", "negative"}},
		{[]string{"--runtime", "1e400"}, 2, []string{"--runtime"}},
		{[]string{"--runtime", "1000000h"}, 1, []string{"runtime", "seconds from 0 to 604800"}},
		{[]string{"--ramp", "nan"}, 2, []string{"--ramp"}},
		{[]string{"--until-steady", "--min-runtime", "NaN"}, 2, []string{"--min-runtime"}},
		{[]string{"--until-steady", "--max-runtime", "Inf"}, 2, []string{"--max-runtime"}},
		{[]string{"--until-steady", "--min-runtime", "30s", "--max-runtime", "10s"}, 2, []string{"below --min-runtime"}},
		{[]string{"--size", "99999999999999999999T"}, 2, []string{"--size", "too large", "want a byte size"}},
		{[]string{"--size", "NaN"}, 2, []string{"--size"}},
		{[]string{"--size", "-1G"}, 2, []string{"--size", "negative"}},
		{[]string{"--writeback-cap", "NaN"}, 2, []string{"--writeback-cap"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := append(append([]string{"run", "--fio", "/nonexistent/fio"}, tt.args...), dir)
			_, stderr, code := execute(t, args...)
			if code != tt.code {
				t.Errorf("exit code = %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not mention %q:\n%s", w, stderr)
				}
			}
			if !strings.Contains(stderr, "hint:") {
				t.Errorf("no hint:\n%s", stderr)
			}
		})
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("bad input left files behind: %v", ents)
	}
}

// A hostile job file is refused before anything runs, naming the option,
// and nothing it names is touched.
func TestRunRefusesHostileJobFile(t *testing.T) {
	base := t.TempDir()
	canary := filepath.Join(base, "pwned")
	job := filepath.Join(base, "j.fio")
	for _, text := range []string{
		"[a]\nrw=read\nexec_prerun=touch " + canary + "\n",
		"[a]\nrw=read\nwrite_iolog=" + canary + "\n",
		"[a]\nrw=read\ninclude\t" + canary + "\n",
		"[a]\nioengine=external:" + canary + "\n",
	} {
		if err := os.WriteFile(job, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := execute(t, "run", "--job", job, "-q", filepath.Join(base, "target"))
		if code != 1 || !strings.Contains(stderr, "refused") && !strings.Contains(stderr, "include") && !strings.Contains(stderr, "engine") {
			t.Errorf("%q: exit %d\n%s", text, code, stderr)
		}
		if _, err := os.Stat(canary); err == nil {
			t.Fatalf("%q: the job file's command ran", text)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "target")); err == nil {
		t.Error("a refused job file still created the target directory")
	}
}

// --runtime takes Go durations as well as seconds.
func TestRunRuntimeDuration(t *testing.T) {
	needFio(t)
	base := t.TempDir()
	job := filepath.Join(base, "j.fio")
	if err := os.WriteFile(job, []byte("[r]\nrw=randread\nbs=4k\nruntime=30\ntime_based\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := execute(t, "run", "--job", job, "--runtime", "1500ms", "--ramp", "0s", "--size", "64M", "-o", "json", "-q", "--create", filepath.Join(base, "t"))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var rs []result.Result
	if err := json.Unmarshal([]byte(stdout), &rs); err != nil || len(rs) != 1 {
		t.Fatalf("results: %v\n%s", err, stdout)
	}
	if rs[0].Test.RuntimeS != 1.5 || !strings.Contains(rs[0].FioJob, "runtime=1500ms") {
		t.Errorf("runtime = %v s, job:\n%s", rs[0].Test.RuntimeS, rs[0].FioJob)
	}
	if !contains(rs[0].FioArgs, "--readonly") {
		t.Errorf("a read-only test on a preconditioned file ran without --readonly: %v", rs[0].FioArgs)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestHostileFlagsRefused: values an audit got through are usage errors
// now, before any IO: a job file that is a FIFO or a device, labels with
// control characters or no bound on their size, a negative watch
// duration, Kubernetes names the API would refuse.
func TestHostileFlagsRefused(t *testing.T) {
	base := t.TempDir()
	fifo := filepath.Join(base, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	job := filepath.Join(base, "j.fio")
	if err := os.WriteFile(job, []byte("[r]\nrw=randread\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(base, "t")
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"run", "--job", fifo, "--no-save", target}, "not a regular file", 1},
		{[]string{"run", "--job", "/dev/zero", "--no-save", target}, "not a regular file", 1},
		{[]string{"run", "--job", job, "--no-save", "--label", "k=\x1b]0;x\a", target}, "control character", 2},
		{[]string{"run", "--job", job, "--no-save", "--label", "k=" + strings.Repeat("v", 300), target}, "longer than 256", 2},
		{[]string{"diagnose", "--no-save", "--label", "bad key=v", target}, "in the key", 2},
		{[]string{"watch", "--duration", "-1s"}, "negative", 2},
		{[]string{"k8s", "run", "--storage-class", "bad class!", "--kubeconfig", filepath.Join(base, "none")}, "is not valid", 2},
		{[]string{"k8s", "run", "--storage-class", "fast", "-n", "Bad_NS!", "--kubeconfig", filepath.Join(base, "none")}, "is not valid", 2},
	} {
		done := make(chan struct{})
		var stderr string
		var code int
		go func() {
			defer close(done)
			_, stderr, code = execute(t, tc.args...)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%q: still running after 20 s", tc.args)
		}
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, want %d saying %q:\n%s", tc.args, code, tc.code, tc.want, stderr)
		}
		if strings.ContainsAny(stderr, "\x1b\a") {
			t.Errorf("%q: stderr carries a control character: %q", tc.args, stderr)
		}
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("a refused run created its target directory")
	}
}

// TestK8sTimeFlagsTakeDurations: k8s run's times take the same spellings
// as run's; a bad one is a usage error naming the flag.
func TestK8sTimeFlagsTakeDurations(t *testing.T) {
	none := filepath.Join(t.TempDir(), "none")
	for _, args := range [][]string{{"--runtime", "90s"}, {"--runtime", "90"}, {"--ramp", "1500ms"}, {"--until-steady", "--max-runtime", "5m", "--min-runtime", "20s"}} {
		_, stderr, code := execute(t, append([]string{"k8s", "run", "--storage-class", "fast", "--kubeconfig", none}, args...)...)
		if code == 2 || strings.Contains(stderr, "invalid argument") {
			t.Errorf("%q refused: exit %d\n%s", args, code, stderr)
		}
	}
	_, stderr, code := execute(t, "k8s", "run", "--storage-class", "fast", "--kubeconfig", none, "--runtime", "-5s")
	if code != 2 || !strings.Contains(stderr, "--runtime") {
		t.Errorf("--runtime -5s: exit %d\n%s", code, stderr)
	}
}

// run --test picks tests of a suite, repeatable, in the suite's order;
// an unknown name is a usage error that lists the suite's tests.
func TestRunSelectsTests(t *testing.T) {
	dir := t.TempDir()
	fixture, err := filepath.Abs("../runner/testdata/exec_prerun_failed.fio33.json")
	if err != nil {
		t.Fatal(err)
	}
	fio := filepath.Join(t.TempDir(), "fio")
	script := "#!/bin/sh\ncase \"$1\" in\n--version) echo fio-3.33; exit 0;;\n--enghelp=*) exit 0;;\nesac\ncat '" + fixture + "'\n"
	if err := os.WriteFile(fio, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out, stderr, _ := execute(t, "run", "--fio", fio, "--suite", "quick", "--test", "randread-4k-qd1", "--test", "randread-4k-qd32",
		"--no-precondition", "--no-metadata", "--size", "64M", "-o", "ndjson", "-q", dir)
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r result.Result
		if err := json.Unmarshal([]byte(line), &r); err == nil && r.Test.Name != "" {
			names = append(names, r.Test.Name)
		}
	}
	if strings.Join(names, ",") != "randread-4k-qd32,randread-4k-qd1" {
		t.Errorf("ran %v, want the two tests in the suite's order; stderr:\n%s", names, stderr)
	}
	_, stderr, code := execute(t, "run", "--fio", fio, "--suite", "quick", "--test", "nope", dir)
	if code != 2 || !strings.Contains(stderr, `suite "quick" has no test "nope"`) || !strings.Contains(stderr, "hint: tests of quick: randread-4k-qd32, randwrite-4k-qd32") {
		t.Errorf("unknown test: exit %d\n%s", code, stderr)
	}
}

// A DIR that does not exist is refused by run and diagnose, with what to
// do, before anything is created or measured. (A mistyped
// /nonexistent/dir once wrote 1 GiB on the root disk and left
// /nonexistent behind.)
func TestMissingDirRefused(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "nonexistent", "dir")
	for _, args := range [][]string{
		{"run", "--suite", "etcd", "--no-save", "-q", dir},
		{"diagnose", "--no-save", "-q", "--no-metadata", dir},
	} {
		stdout, stderr, code := execute(t, args...)
		if code != 1 || !strings.Contains(stderr, dir+" does not exist") || !strings.Contains(stderr, "--create") || stdout != "" {
			t.Errorf("%s: exit %d\nstdout: %s\nstderr: %s", args[0], code, stdout, stderr)
		}
		if ents, _ := os.ReadDir(base); len(ents) != 0 {
			t.Errorf("%s: created %v", args[0], ents)
		}
	}
	if _, stderr, code := execute(t, "run", "--device", "/dev/null", "--create"); code != 2 || !strings.Contains(stderr, "--create") {
		t.Errorf("--create with --device: exit %d\n%s", code, stderr)
	}
}
