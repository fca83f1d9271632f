package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 27.10: Kubernetes ids and numbers are checked before any call to
// the API: with a kubeconfig whose server is nowhere, a mistake must be
// what the command says, not a connection error.
func TestK8sIDsCheckedFirst(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: iolens}}]
current-context: x
`), 0o600)
	digest := "ghcr.io/iolens/iolens@sha256:"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"k8s", "run", "--run-id", "a b"}, "not a run id"},
		{[]string{"k8s", "run", "--run-id", "../x"}, "not a run id"},
		{[]string{"k8s", "run", "--run-id", strings.Repeat("a", 64)}, "not a run id"},
		{[]string{"k8s", "diagnose", "--run-id", "x\x1b[2J"}, "not a run id"},
		{[]string{"k8s", "cleanup", "--run", "../x"}, "not a run id"},
		{[]string{"k8s", "cleanup", "--run", "a,b=c"}, "not a run id"},
		{[]string{"k8s", "node-check", "n1", "--run-as-user", "-1"}, "--run-as-user -1"},
		{[]string{"k8s", "node-check", "n1", "--run-as-user", "4294967296"}, "--run-as-user 4294967296"},
		{[]string{"k8s", "node-check", "N1/..", "--path", "/var/lib/etcd"}, "node name"},
		{[]string{"k8s", "node-check", "n1", "--path", "/var/lib/kubelet/pods"}, "system tree"},
		{[]string{"k8s", "run", "--agent-service-account", "Bad_SA"}, "--agent-service-account"},
		{[]string{"k8s", "run", "--image", digest + "abc"}, "--image"},
		{[]string{"k8s", "run", "--image", "ghcr.io/iolens/iolens:latest"}, "never latest"},
		{[]string{"k8s", "run", "--bind-timeout", "0s"}, "--bind-timeout"},
		{[]string{"k8s", "run", "--start-timeout", "-1m"}, "negative"},
		{[]string{"k8s", "run", "--cleanup-timeout", "0"}, "--cleanup-timeout"},
		{[]string{"k8s", "cleanup", "--all", "--timeout", "0s"}, "--timeout"},
		{[]string{"k8s", "watch", "--refresh", "0s"}, "--refresh"},
		{[]string{"k8s", "watch", "--watch-namespace", "Bad NS"}, "namespace"},
		{[]string{"k8s", "run", "--out", "/"}, "--out"},
		// Issue 34.6: an empty run id and a selector value with "=" reached
		// the API.
		{[]string{"k8s", "run", "--run-id", ""}, "not a run id"},
		{[]string{"k8s", "diagnose", "--run-id", ""}, "not a run id"},
		{[]string{"k8s", "run", "--node-selector", "a=b=c"}, "--node-selector"},
		{[]string{"k8s", "diagnose", "--node-selector", "a=b=c"}, "--node-selector"},
		{[]string{"k8s", "run", "--node-selector", "a=b,a=c"}, "--node-selector"},
		{[]string{"k8s", "run", "--node-selector", "bad key=x"}, "--node-selector"},
	} {
		args := append(c.args, "--kubeconfig", kc)
		_, errOut, code := execute(t, args...)
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "127.0.0.1:1") {
			t.Errorf("%q: exit %d, %q; want 2 and %q before any API call", c.args, code, errOut, c.want)
		}
	}
}
