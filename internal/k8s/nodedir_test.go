package k8s

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCheckHostPath(t *testing.T) {
	for _, c := range []struct {
		path string
		ok   bool
	}{
		{"/var/lib/etcd", true},
		{"/var/lib/etcd/", true},
		{"/mnt", true}, // a cloud VM's local disk
		{"/mnt/disks/ssd0", true},
		{"/var/lib/containerd", false},
		{"/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs", false},
		{"/var/lib/kubelet", false},
		{"/var/lib/kubelet/pods/0b8c/volumes", false},
		{"/var/lib/docker", false},
		{"/var/lib/docker-data", true},
		{"/var/lib/kubelet-backup", true},
		{"/data", true},
		{"/", false},
		{"//", false},
		{"/var", false},
		{"/var/lib", false},
		{"/home", false},
		{"/root", false},
		{"/tmp", false},
		{"/etc", false},
		{"/etc/kubernetes", false},
		{"/usr/local/data", false},
		{"/proc/1/root", false},
		{"/sys/fs/cgroup", false},
		{"/dev/shm", false},
		{"/boot/efi", false},
		{"/run/containerd", false},
		{"/var/run/secrets", false},
		{"var/lib/etcd", false},
		{"", false},
		{"/var/lib/etcd/../../..", false},
		{"/var/lib/./etcd", false},
		{"/var//lib/etcd", false},
		{"/var/lib/etcd\x00", false},
	} {
		err := CheckHostPath(c.path)
		if (err == nil) != c.ok {
			t.Errorf("CheckHostPath(%q) = %v, want ok=%v", c.path, err, c.ok)
		}
		if err != nil && err.(*HostPathError).Hint() == "" {
			t.Errorf("%q: no hint", c.path)
		}
	}
}

func TestNodeDirName(t *testing.T) {
	for _, c := range []struct{ run, target, want string }{
		{"20260101-120000-abc123", "t1", "iolens-20260101-120000-abc123-t1"},
		{"e2e-keep-x", "t12", "iolens-e2e-keep-x-t12"},
	} {
		if got := NodeDirName(c.run, c.target); got != c.want {
			t.Errorf("NodeDirName(%q, %q) = %q, want %q", c.run, c.target, got, c.want)
		}
	}
	// Run ids a file name cannot hold become a hash: still one element,
	// still distinct.
	a, b := NodeDirName("../../etc", "t1"), NodeDirName("../../etd", "t1")
	if a == b || strings.ContainsAny(a, "/.") || !strings.HasPrefix(a, "iolens-") || checkDirName(a) != nil {
		t.Errorf("%q, %q", a, b)
	}
	if long := NodeDirName(strings.Repeat("a", 300), "t1"); len(long) > 64 {
		t.Errorf("name of %d bytes", len(long))
	}
}

func TestNodeDirLifecycle(t *testing.T) {
	parent := t.TempDir()
	name := NodeDirName("r1", "t1")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	if err := CheckNodeDir(parent, name); err == nil || !strings.Contains(err.Error(), "not ready") {
		t.Errorf("the probe before the directory is made: %v", err)
	}
	go func() { done <- ServeNodeDir(ctx, parent, name, "r1") }()
	deadline := time.Now().Add(5 * time.Second)
	for CheckNodeDir(parent, name) != nil {
		if time.Now().After(deadline) {
			t.Fatal("never ready")
		}
		time.Sleep(5 * time.Millisecond)
	}
	dir := filepath.Join(parent, name)
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("dir %v, %v", fi, err)
	}
	// What the agent leaves goes with the directory.
	if err := os.MkdirAll(filepath.Join(dir, "scratch"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scratch", "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("left %d entries in the host path", len(ents))
	}
}

func TestNodeDirRefuses(t *testing.T) {
	parent := t.TempDir()
	// Someone else's directory of the same name is neither adopted nor
	// removed.
	theirs := filepath.Join(parent, "iolens-r1-t1")
	if err := os.Mkdir(theirs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(theirs, "data"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := PrepareNodeDir(parent, "iolens-r1-t1", "r1"); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("prepare over an existing directory: %v", err)
	}
	if err := RemoveNodeDir(parent, "iolens-r1-t1"); err == nil || !strings.Contains(err.Error(), "no iolens marker") {
		t.Errorf("remove without marker: %v", err)
	}
	if _, err := os.Stat(filepath.Join(theirs, "data")); err != nil {
		t.Errorf("their file is gone: %v", err)
	}
	// A link is never followed.
	if err := os.Symlink(theirs, filepath.Join(parent, "iolens-link")); err != nil {
		t.Fatal(err)
	}
	if err := RemoveNodeDir(parent, "iolens-link"); err == nil {
		t.Error("removed through a link")
	}
	for _, bad := range []string{"../x", "iolens-../../etc", "etc", "iolens-a/b", ""} {
		if err := PrepareNodeDir(parent, bad, "r1"); err == nil {
			t.Errorf("prepared %q", bad)
		}
		if err := RemoveNodeDir(parent, bad); err == nil {
			t.Errorf("removed %q", bad)
		}
	}
	if _, err := os.Stat(filepath.Join(theirs, "data")); err != nil {
		t.Errorf("their file is gone: %v", err)
	}
}

func FuzzCheckHostPath(f *testing.F) {
	for _, s := range []string{"/var/lib/etcd", "/", "/etc/../var/lib/etcd", "//var", "/proc/self", "/var/lib/./x", "relative", "/mnt/disks/a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if CheckHostPath(p) != nil {
			return
		}
		c := filepath.Clean(p)
		if !filepath.IsAbs(p) || c == "/" || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") {
			t.Fatalf("%q accepted", p)
		}
		for _, r := range systemTrees {
			if c == r || strings.HasPrefix(c, r+"/") {
				t.Fatalf("%q accepted in %s", p, r)
			}
		}
	})
}

func FuzzNodeDirName(f *testing.F) {
	for _, s := range []string{"20260101-120000-abc123", "../../etc", "", "a/b", strings.Repeat("x", 100)} {
		f.Add(s, "t1")
	}
	f.Fuzz(func(t *testing.T, run, target string) {
		n := NodeDirName(run, target)
		if checkDirName(n) != nil || strings.ContainsAny(n, "/\x00") || n == "." || n == ".." || len(n) > 64 {
			t.Fatalf("NodeDirName(%q, %q) = %q", run, target, n)
		}
	})
}
