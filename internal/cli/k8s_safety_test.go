package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/k8s"
	"github.com/iolens/iolens/internal/runner"
	corev1 "k8s.io/api/core/v1"
)

// deadKubeconfig points at an address where no API server listens: a
// command that reaches for the cluster fails with a connection error.
func deadKubeconfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: bench}}]
current-context: c
`
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// hostileJobs are job files the runner refuses: k8s run, node-check and
// the agent must refuse each the same way, and k8s run and node-check
// before they touch the cluster.
var hostileJobs = map[string]string{
	"log to a host path": "[a]\nrw=randread\nwrite_bw_log=/etc/cron.d/x\n",
	"own file name":      "[a]\nrw=randread\ndirectory=/\n",
	"include":            "[a]\nrw=read\ninclude /etc/shadow\n",
	"exec before":        "[a]\nrw=read\nexec_prerun=touch /tmp/pwned\n",
	"exec engine":        "[a]\nioengine=exec\nprogram=/bin/sh\n",
	"iolog write":        "[a]\nrw=read\nwrite_iolog=/etc/passwd\n",
}

func TestK8sJobFileRulesAreTheRunners(t *testing.T) {
	kc := deadKubeconfig(t)
	dir := t.TempDir()
	refusedSomething := false
	for name, job := range hostileJobs {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".fio")
			if err := os.WriteFile(p, []byte(job), 0o644); err != nil {
				t.Fatal(err)
			}
			_, runnerErr := runner.SuiteFromJobFile(p, job)
			if runnerErr == nil && name != "own file name" {
				// A job that runs commands or writes outside the scratch
				// space never reaches a pod (a file name is replaced by
				// iolens's own, with a note).
				t.Errorf("the runner accepts a job that must be refused")
			}
			for _, args := range [][]string{
				{"k8s", "--kubeconfig", kc, "run", "--storage-class", "fast", "--job", p},
				{"k8s", "--kubeconfig", kc, "node-check", "node-1", "--path", "/var/lib/etcd", "--job", p},
			} {
				_, stderr, code := execute(t, args...)
				if code == 0 {
					t.Fatalf("%v: exit 0", args[3])
				}
				reached := strings.Contains(stderr, "127.0.0.1:1")
				if runnerErr != nil && reached {
					t.Errorf("%s: the runner refuses this job file (%v), yet the cluster was contacted:\n%s", args[3], runnerErr, stderr)
				}
				if runnerErr == nil && !reached {
					t.Errorf("%s: the runner accepts this job file, yet it was refused before the cluster:\n%s", args[3], stderr)
				}
			}
			if runnerErr == nil {
				// Accepted by the runner: never run a hostile job here.
				return
			}
			refusedSomething = true
			// The agent in the pod applies the same rules and says why in
			// its final record.
			t.Setenv("IOLENS_TEST_JOB", job)
			var out, errb bytes.Buffer
			cmd := NewRootCommand(IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb})
			cmd.SetArgs([]string{"k8s", "agent", "--dir", t.TempDir(), "--job-env", "IOLENS_TEST_JOB", "--job-name", "hostile.fio"})
			err := cmd.ExecuteContext(context.Background())
			if err == nil {
				t.Fatal("the agent ran a job file the runner refuses")
			}
			var last k8s.Record
			fr := k8s.NewFrameReader(&out)
			for {
				rec, err := fr.Next()
				if err != nil {
					break
				}
				last = rec
			}
			_, agentWant := runner.SuiteFromJobFile("hostile.fio", job)
			if last.Type != k8s.RecordDone || last.Error != err.Error() || agentWant == nil || last.Error != agentWant.Error() {
				t.Errorf("agent's final record %+v, want the runner's error %q", last, agentWant)
			}
		})
	}
	if !refusedSomething {
		t.Error("the runner refused none of the hostile job files")
	}
}

func TestK8sNodeCheckPathRefused(t *testing.T) {
	kc := deadKubeconfig(t)
	for _, p := range []string{"/", "/etc", "/var/lib", "/proc/1", "relative", "/var/lib/etcd/../.."} {
		_, stderr, code := execute(t, "k8s", "--kubeconfig", kc, "node-check", "node-1", "--path", p)
		if code != 2 || !strings.Contains(stderr, "--path") || strings.Contains(stderr, "127.0.0.1:1") {
			t.Errorf("--path %q: exit %d\n%s", p, code, stderr)
		}
	}
}

// Every flag the CLI gives the agent in the pod is one the agent takes.
func TestK8sAgentTakesItsArgs(t *testing.T) {
	max := 0.0
	for _, mode := range []corev1.PersistentVolumeMode{corev1.PersistentVolumeFilesystem, corev1.PersistentVolumeBlock} {
		for _, steady := range []bool{false, true} {
			c := k8s.Config{RunID: "r1", VolumeMode: mode, Timeouts: k8s.DefaultTimeouts(),
				Agent: k8s.AgentArgs{JobFile: "[a]\nrw=read\n", JobName: "a.fio", RuntimeS: 5, RampS: 2, RampSet: true, Repeat: 3,
					FileSize: "1G", UntilSteady: steady, MinRuntimeS: 10, MaxRuntimeS: max}}
			max = 60
			args := c.AgentArgs(k8s.Target{ID: "t1", StorageClass: "fast", Group: "g1", Slot: 1})
			diag := c
			diag.Agent = k8s.AgentArgs{Diagnose: true, Budget: 90 * time.Second, Precision: 0.02}
			dargs := diag.AgentArgs(k8s.Target{ID: "t1", StorageClass: "fast", Group: "g1"})
			if err := newK8sAgentCommand(IOStreams{}).ParseFlags(dargs[2:]); err != nil || !strings.Contains(strings.Join(dargs, " "), "--diagnose --budget 1m30s --precision 0.02") {
				t.Errorf("diagnose agent args %v: %v", dargs, err)
			}
			cmd := newK8sAgentCommand(IOStreams{})
			if args[0] != "k8s" || args[1] != "agent" {
				t.Fatalf("args %v", args)
			}
			if err := cmd.ParseFlags(args[2:]); err != nil {
				t.Errorf("the agent refuses %v: %v", args, err)
			}
			joined := strings.Join(args, " ")
			for _, want := range []string{"--ramp 2", "--repeat 3", "--runtime 5", "--file-size 1G"} {
				if !strings.Contains(joined, want) {
					t.Errorf("args %q lack %q", joined, want)
				}
			}
			if steady != strings.Contains(joined, "--until-steady --min-runtime 10") {
				t.Errorf("until-steady %v: %q", steady, joined)
			}
		}
	}
}

func TestK8sRunFlags(t *testing.T) {
	kc := deadKubeconfig(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--target", "fast"}, 2, "CLASS:SIZE[:MODE]"},
		{[]string{"--target", "fast:10Gi:Raw"}, 2, "want Filesystem or Block"},
		{[]string{"--ramp", "-1"}, 2, "--ramp"},
		{[]string{"--runtime", "NaN"}, 2, "--runtime"},
		{[]string{"--until-steady", "--min-runtime", "60", "--max-runtime", "30"}, 2, "min <= max"},
		{[]string{"--size", "1Gi", "--pvc-size", "2Gi"}, 2, "give only --pvc-size"},
		{[]string{"--pvc-size", "lots"}, 2, "--pvc-size"},
		// Valid flags reach the cluster (and fail there, as none listens).
		{[]string{"--target", "fast:10Gi", "--target", "raw:1Ti:Block", "--ramp", "0", "--until-steady", "--max-runtime", "60"}, 1, "127.0.0.1:1"},
		{[]string{"--size", "1Gi"}, 1, "--size has been deprecated, use --pvc-size"},
	} {
		_, stderr, code := execute(t, append([]string{"k8s", "--kubeconfig", kc, "run", "--storage-class", "fast"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", c.args, code, c.code, c.want, stderr)
		}
	}
}

func TestK8sDiagnoseFlags(t *testing.T) {
	kc := deadKubeconfig(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--budget", "10s"}, 2, "--budget"},
		{[]string{"--precision", "90%"}, 2, "--precision"},
		{[]string{"-o", "html"}, 2, "text or json"},
		{[]string{"--nodes", "a", "--all-nodes"}, 2, "exclusive"},
		{[]string{"--pvc-size", "lots"}, 2, "--pvc-size"},
		{[]string{"--image", "x/iolens:latest"}, 2, "never latest"},
		{[]string{"--storage-class", "fast", "--budget", "1m"}, 1, "127.0.0.1:1"},
	} {
		_, stderr, code := execute(t, append([]string{"k8s", "--kubeconfig", kc, "diagnose"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", c.args, code, c.code, c.want, stderr)
		}
	}
}
