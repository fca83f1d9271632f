package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/image"
	"github.com/iolens/iolens/internal/result"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TestWatchDaemonSet checks the least-privilege promises of the manifest
// and that its arguments are flags iolens watch accepts.
func TestWatchDaemonSet(t *testing.T) {
	b, err := os.ReadFile("../../deploy/watch-daemonset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ds *appsv1.DaemonSet
	for _, doc := range strings.Split(string(b), "\n---\n") {
		if strings.Contains(doc, "kind: DaemonSet") {
			ds = &appsv1.DaemonSet{}
			if err := yaml.UnmarshalStrict([]byte(doc), ds); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ds == nil {
		t.Fatal("no DaemonSet in the manifest")
	}
	spec := ds.Spec.Template.Spec
	if spec.HostPID || spec.HostNetwork || spec.HostIPC {
		t.Error("the pod must not share the host's PID, network or IPC namespace")
	}
	if psc := spec.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Error("the pod must run as non-root")
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers", len(spec.Containers))
	}
	c := spec.Containers[0]
	sc := c.SecurityContext
	if sc == nil || (sc.Privileged != nil && *sc.Privileged) || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.Capabilities == nil || len(sc.Capabilities.Add) > 0 ||
		len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("container security context is not least privilege: %+v", sc)
	}
	for _, m := range c.VolumeMounts {
		if !m.ReadOnly {
			t.Errorf("mount %s is writable", m.MountPath)
		}
	}
	if strings.HasSuffix(c.Image, ":latest") || !strings.Contains(c.Image, ":") {
		t.Errorf("image %q must be pinned", c.Image)
	}
	// The metrics port binds the pod's own IP (it has no authentication),
	// never every interface.
	if !slices.Contains(c.Args, "--metrics-addr=[$(POD_IP)]:9101") {
		t.Errorf("the metrics port does not bind the pod IP only: %v", c.Args)
	}
	podIP := false
	for _, e := range c.Env {
		podIP = podIP || e.Name == "POD_IP" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP"
	}
	if !podIP {
		t.Error("no POD_IP from status.podIP for --metrics-addr")
	}
	cmd := newWatchCommand(IOStreams{})
	if c.Args[0] != "watch" {
		t.Fatalf("args %v do not run watch", c.Args)
	}
	if err := cmd.ParseFlags(c.Args[1:]); err != nil {
		t.Errorf("iolens watch rejects the DaemonSet's args: %v", err)
	}
	if ds.Spec.Template.Labels["app.kubernetes.io/name"] != strings.TrimPrefix(WatchSelector, "app.kubernetes.io/name=") {
		t.Error("the pods' labels do not match what 'iolens k8s watch' selects")
	}
	// Per-node expectations, not one --expect for every node of a mixed
	// cluster.
	if !slices.Contains(c.Args, "--expect-from-cluster") {
		t.Errorf("the DaemonSet does not take each node's expectations from the cluster: %v", c.Args)
	}
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--expect=") {
			t.Errorf("one %s for every node", a)
		}
	}
	// The image follows the release scheme: the repository 'make image'
	// and 'make dist' tag, with a release version ('make dist' pins the
	// released copy to its tag and digest).
	repo, tag, _ := strings.Cut(c.Image, ":")
	if repo != image.Repository || !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(tag) || c.Image != image.Reference("v"+tag) {
		t.Errorf("image %q is not %s of a release", c.Image, image.Reference("vX.Y.Z"))
	}
}

// TestWatchRBAC: the watch's service account may read what per-node
// expectations need, and nothing else, and change nothing.
func TestWatchRBAC(t *testing.T) {
	b, err := os.ReadFile("../../deploy/watch-daemonset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role *rbacv1.ClusterRole
	for _, doc := range strings.Split(string(b), "\n---\n") {
		if regexp.MustCompile(`(?m)^kind: ClusterRole$`).MatchString(doc) {
			role = &rbacv1.ClusterRole{}
			if err := yaml.UnmarshalStrict([]byte(doc), role); err != nil {
				t.Fatal(err)
			}
		}
	}
	if role == nil {
		t.Fatal("no ClusterRole")
	}
	granted := map[string]bool{}
	for _, r := range role.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if v != "get" && v != "list" && v != "watch" {
						t.Errorf("%s %s/%s: the watch only reads", v, g, res)
					}
					granted[v+" "+g+"/"+res] = true
				}
			}
		}
	}
	for _, want := range []string{"list /pods", "get /nodes", "get /persistentvolumeclaims", "get /persistentvolumes", "get storage.k8s.io/storageclasses"} {
		if !granted[want] {
			t.Errorf("not granted: %s", want)
		}
	}
	if len(granted) != 5 {
		t.Errorf("granted %v, want exactly the five above", granted)
	}
}

// TestWatchCommandFixture runs iolens watch on a fixture tree and reads
// the stream back as a result.
func TestWatchCommandFixture(t *testing.T) {
	root := t.TempDir()
	proc, sys := filepath.Join(root, "proc"), filepath.Join(root, "sys")
	w := func(p, s string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(s), 0o644)
	}
	w(filepath.Join(proc, "diskstats"), " 253 16 vdb 10 0 80 5 20 0 160 10 0 15 15 0 0 0 0\n")
	w(filepath.Join(proc, "stat"), "cpu  100 0 50 800 40 0 10 0 0 0\nbtime 1\n")
	w(filepath.Join(proc, "meminfo"), "MemTotal: 1000 kB\nDirty: 8 kB\nWriteback: 0 kB\n")
	w(filepath.Join(sys, "devices/virtual/block/vdb/dev"), "253:16\n")
	w(filepath.Join(sys, "devices/virtual/block/vdb/queue/rotational"), "0\n")
	os.MkdirAll(filepath.Join(sys, "class/block"), 0o755)
	os.Symlink("../../devices/virtual/block/vdb", filepath.Join(sys, "class/block/vdb"))
	var out, errb bytes.Buffer
	cmd := NewRootCommand(IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb})
	cmd.SetArgs([]string{"watch", "vdb", "--proc-root", proc, "--sys-root", sys, "--interval", "100ms", "--duration", "350ms", "--top", "0"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	var recs []result.WatchRecord
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		r, err := result.DecodeWatch([]byte(l))
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		recs = append(recs, r)
	}
	if len(recs) < 3 || recs[0].Type != result.WatchTypeStart || recs[1].Type != result.WatchTypeSample || recs[1].Devices[0].Device != "vdb" || recs[1].Devices[0].State != "ok" {
		t.Fatalf("stream = %s", out.String())
	}
	cmd = NewRootCommand(IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &errb})
	cmd.SetArgs([]string{"watch", "nosuchdev", "--proc-root", proc, "--sys-root", sys})
	if err := cmd.Execute(); err == nil || ExitCode(err, false, &bytes.Buffer{}) != 1 {
		t.Errorf("an unknown device must fail clearly, got %v", err)
	}
}
