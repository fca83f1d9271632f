package realio

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// scripts/test-failures tells again, at the end of make test, what failed
// in a stream that the e2e's output scrolled away: the leaf tests that
// failed with their last lines, panics, and the failed packages, from
// go test's output with or without -v.
func TestTestFailures(t *testing.T) {
	_, script := makeScript(t, "test-failures")
	if _, err := exec.LookPath("awk"); err != nil {
		t.Skipf("no awk: %v", err)
	}
	run := func(in string) string {
		t.Helper()
		cmd := exec.Command(script)
		cmd.Stdin = strings.NewReader(in)
		cmd.Env = append(os.Environ(), "LINES_PER_TEST=2")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("test-failures: %v", err)
		}
		return string(out)
	}
	verbose := `cluster: 07:00:01 up
=== RUN   TestWatch
    watch_test.go:56: TestWatch took 26.9s
--- PASS: TestWatch (27.80s)
=== RUN   TestCluster
=== RUN   TestCluster/matrix
    e2e_test.go:393: local-path-b slot 1: 404 IOPS
=== RUN   TestCluster/diagnose
    nodes_test.go:327: e2e-node: read 63574 IOPS
    nodes_test.go:334: outliers [], want e2e-node-2 alone
        second line of it
=== RUN   TestCluster/block
    e2e_test.go:480: block fine
--- FAIL: TestCluster (100.00s)
    --- PASS: TestCluster/matrix (18.64s)
    --- FAIL: TestCluster/diagnose (70.17s)
    --- PASS: TestCluster/block (9.44s)
FAIL
FAIL	github.com/iolens/iolens/test/e2e	327.423s
FAIL
    an indented line of the cluster going down
`
	want := `--- FAIL: TestCluster/diagnose
    nodes_test.go:334: outliers [], want e2e-node-2 alone
    second line of it
FAIL github.com/iolens/iolens/test/e2e
`
	if got := run(verbose); got != want {
		t.Errorf("with -v:\n%s\nwant\n%s", got, want)
	}

	quiet := `ok  	github.com/iolens/iolens/internal/plan	40.1s
--- FAIL: TestShared (2.00s)
    --- FAIL: TestShared/capped (1.00s)
        plan_test.go:10: 380 IOPS, want about 400
--- FAIL: TestOther (0.10s)
panic: runtime error: index out of range [recovered]
FAIL	github.com/iolens/iolens/internal/report	3.2s
FAIL
`
	want = `--- FAIL: TestShared/capped
    plan_test.go:10: 380 IOPS, want about 400
--- FAIL: TestOther
    panic: runtime error: index out of range [recovered]
panic: runtime error: index out of range [recovered]
FAIL github.com/iolens/iolens/internal/report
`
	if got := run(quiet); got != want {
		t.Errorf("without -v:\n%s\nwant\n%s", got, want)
	}

	if got := run("ok  \tgithub.com/iolens/iolens/internal/plan\t40.1s\n--- PASS: TestX (0.1s)\n"); got != "" {
		t.Errorf("nothing failed, yet:\n%s", got)
	}
}
