package cli

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// notFiles are the flags that take a string and name no file iolens reads
// or writes (a flag that names one is marked with markOutput or
// markInput). A new string flag must be marked or added here, so that no
// output flag is added without the checks.
var notFiles = map[string]bool{
	"access-mode": true, "agent-service-account": true, "as": true, "as-group": true, "as-uid": true, "attached": true,
	"burst-bw": true, "bw": true, "cache": true, "cache-bw": true, "cache-size": true, "cgroup": true,
	"cgroup-root": true, "cluster": true, "context": true, "device": true, "emulated": true,
	"etcd": true, "expect": true, "fail-on": true, "file-size": true, "fio": true, "flush-latency": true,
	"from": true, "fs": true, "gate-configmap": true, "gate-key": true, "grafana": true, "grafana-dashboard": true,
	"image": true, "instance": true, "io-size": true, "job-env": true, "job-name": true, "label": true, "latency": true,
	"match": true, "metrics-addr": true, "name": true, "namespace": true, "node": true, "node-selector": true,
	"nodes": true, "output": true, "parent": true, "path": true, "pod-logs": true, "precision": true,
	"price-as-of": true, "proc-root": true, "profile": true, "prometheus": true, "prometheus-user": true,
	"provider": true, "pull-policy": true, "push": true, "pvc": true, "pvc-size": true, "read-bw": true,
	"read-latency": true, "request-timeout": true, "run": true, "run-id": true, "selector": true, "server": true,
	"size": true, "storage-class": true, "suite": true, "sys-root": true, "target": true, "test": true,
	"throttle-at": true, "tls-server-name": true, "to": true, "token": true, "tolerate": true, "total-bw": true,
	"server-cpu": true, "region": true,
	"user": true, "vm": true, "volume-mode": true, "watch-namespace": true, "write-bw": true, "write-latency": true,
	"read-errors": true, "down-every": true, "down-for": true, "cold-read": true, "cold-block": true,
	// Directories iolens (or the Kubernetes client) keeps its own state
	// in, and directories under test; never a file a user names as output.
	"db": true, "state-dir": true, "cache-dir": true, "dir": true,
}

// looksLikeOutput is a flag name that can only name an output file.
func looksLikeOutput(name string) bool {
	return name == "out" || strings.HasSuffix(name, "-out") || strings.Contains(name, "html") || strings.Contains(name, "rules") && !strings.HasSuffix(name, "-format")
}

// outputFixtures are, for each command with an output flag, arguments
// that pass its own checks of arguments and get as far as its first
// work, which is harmless here if the output checks were skipped: fio,
// Prometheus, the cluster and /proc are nowhere.
func outputFixtures(dir, in string) map[string][]string {
	nowhere := filepath.Join(dir, "nowhere")
	kube := []string{"k8s", "--kubeconfig", filepath.Join(dir, "kubeconfig")}
	return map[string][]string{
		"iolens analyze":           {"analyze", "--prometheus", "http://127.0.0.1:1"},
		"iolens headroom":          {"headroom", "--prometheus", "http://127.0.0.1:1"},
		"iolens report":            {"report", in},
		"iolens compare":           {"compare", in, in},
		"iolens run":               {"run", filepath.Join(dir, "target"), "--fio", nowhere},
		"iolens diagnose":          {"diagnose", filepath.Join(dir, "target"), "--fio", nowhere},
		"iolens history show":      {"history", "show", "20240501"},
		"iolens history export":    {"history", "export", "20240501"},
		"iolens export prometheus": {"export", "prometheus"},
		"iolens watch":             {"watch", "--proc-root", nowhere, "--sys-root", nowhere, "--duration", "1s"},
		"iolens k8s run":           append(kube, "run", "--storage-class", "fast"),
		"iolens k8s diagnose":      append(kube, "diagnose"),
		"iolens k8s node-check":    append(kube, "node-check", "node-1", "--path", "/var/lib/etcd"),
	}
}

type namedOutput struct {
	cmd     *cobra.Command
	name    string
	outputs []string // every output flag of the command
}

// outputFlagsOf walks the command tree: every output flag of every
// command, and a failure for each string flag that is not classified.
func outputFlagsOf(t *testing.T, root *cobra.Command) []namedOutput {
	var all []namedOutput
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		var outs []string
		seen := map[string]bool{}
		visit := func(f *pflag.Flag) {
			if seen[f.Name] {
				return
			}
			seen[f.Name] = true
			out, in := isMarked(f, outputAnnotation), isMarked(f, inputAnnotation)
			switch {
			case out:
				outs = append(outs, f.Name)
			case looksLikeOutput(f.Name):
				t.Errorf("%s --%s names an output and is not marked with markOutput", c.CommandPath(), f.Name)
			case in:
			case strings.HasPrefix(f.Value.Type(), "string") && !notFiles[f.Name]:
				t.Errorf("%s --%s: mark it with markOutput or markInput if it names a file, else add it to notFiles", c.CommandPath(), f.Name)
			}
		}
		c.LocalFlags().VisitAll(visit)
		c.InheritedFlags().VisitAll(visit)
		sort.Strings(outs)
		for _, o := range outs {
			all = append(all, namedOutput{cmd: c, name: o, outputs: outs})
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	return all
}

// Issue 34.1: every flag of every command that names an output file goes
// through the one check: each refuses the history database (from
// $IOLENS_DB or the default path, its journal, through a link), a device
// node, and another output of the same command, and leaves them as they
// were. A new output flag without a fixture here fails this test.
func TestEveryOutputFlagIsChecked(t *testing.T) {
	dir := t.TempDir()
	in := writeRun(t, dir, "20240501-120000-aaaaaa", []float64{1000}, nil)
	db := filepath.Join(dir, "h.db")
	xdg := filepath.Join(dir, "xdg")
	home := filepath.Join(xdg, "iolens", "history.db")
	os.MkdirAll(filepath.Dir(home), 0o755)
	const keep = "every saved run"
	for _, p := range []string{db, db + "-wal", home} {
		if err := os.WriteFile(p, []byte(keep), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	walLink := filepath.Join(dir, "wal-link.html")
	os.Symlink(db+"-wal", walLink)
	dbLink := filepath.Join(dir, "db-link.html")
	os.Symlink(db, dbLink)
	dev, haveDev := deviceAt(t, filepath.Join(dir, "null"))
	t.Setenv("XDG_DATA_HOME", xdg)

	fixtures := outputFixtures(dir, in)
	flags := outputFlagsOf(t, NewRootCommand(IOStreams{In: strings.NewReader("")}))
	if len(flags) < 15 {
		t.Fatalf("found only %d output flags: the walk is broken", len(flags))
	}
	for _, of := range flags {
		path := of.cmd.CommandPath()
		args, ok := fixtures[path]
		if !ok {
			t.Errorf("%s --%s: no fixture in outputFixtures; add the arguments that reach its work", path, of.name)
			continue
		}
		flag := "--" + of.name
		type tc struct {
			name, value, env, want string
			extra                  []string
		}
		cases := []tc{
			{"IOLENS_DB", db, db, "history database", nil},
			{"IOLENS_DB through a link", dbLink, db, "history database", nil},
			{"its journal through a link", walLink, db, "history database", nil},
			{"the default path", home, "", "history database", nil},
		}
		if haveDev {
			cases = append(cases, tc{"a device node", dev, db, "character device", nil})
		}
		for _, other := range of.outputs {
			if other != of.name {
				clash := filepath.Join(dir, "clash")
				cases = append(cases, tc{"--" + other, clash, db, "name the same file", []string{"--" + other, clash}})
			}
		}
		for _, c := range cases {
			t.Setenv("IOLENS_DB", c.env)
			a := append(append(append([]string{}, args...), c.extra...), flag, c.value)
			_, errOut, code := execute(t, a...)
			if code != 2 || !strings.Contains(errOut, flag) || !strings.Contains(errOut, c.want) {
				t.Errorf("%s %s on %s: exit %d, %q; want exit 2 naming %s and %q", path, flag, c.name, code, errOut, flag, c.want)
			}
		}
	}
	for _, p := range []string{db, db + "-wal", home} {
		if b, _ := os.ReadFile(p); string(b) != keep {
			t.Errorf("%s was written: %.40q", p, b)
		}
	}
	if haveDev {
		isKind(t, dev, os.ModeDevice|os.ModeCharDevice)
	}
	for _, p := range []string{filepath.Join(dir, "clash"), filepath.Join(dir, "target")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was made before the outputs were refused", p)
		}
	}
}

// A link of another user in a sticky shared directory is refused as an
// output by the commands (the check itself is tested in userfile).
func TestPlantedLinkOutputRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a link to another user")
	}
	dir := t.TempDir()
	in := writeRun(t, dir, "20240501-120000-aaaaaa", []float64{1000}, nil)
	shared := filepath.Join(dir, "tmp")
	os.Mkdir(shared, 0o777)
	if err := os.Chmod(shared, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	link := filepath.Join(shared, "r.html")
	os.Symlink(victim, link)
	if err := syscall.Lchown(link, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	t.Setenv("IOLENS_DB", filepath.Join(dir, "h.db"))
	for _, args := range [][]string{{"report", in, "--html", link}, {"analyze", in, "--out", link}} {
		if _, errOut, code := execute(t, args...); code != 2 || !strings.Contains(errOut, "another user") {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target was replaced: %q", b)
	}
}
