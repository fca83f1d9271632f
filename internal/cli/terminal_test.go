package cli

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
)

// hostile is what a result file, a server or a pod may carry to drive a
// terminal: an OSC that sets the title, a clear screen, a C1 CSI, a
// bidi override.
const hostile = "\x1b]0;owned\x07\x1b[2J\u009b31m\u202e"

func noControls(t *testing.T, what, s string) {
	t.Helper()
	for _, c := range []string{"\x1b", "\x07", "\u009b", "\u202e"} {
		if strings.Contains(s, c) {
			t.Errorf("%s lets %q through:\n%q", what, c, s)
		}
	}
}

// Issue 27.5: a run id and labels holding escape sequences, once
// imported, print filtered in history, history show and history rm, and
// CSV neutralises a formula.
func TestTerminalFilterHistory(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	p := writeRun(t, dir, "20240501-120000-aaaaaa", []float64{1000}, map[string]string{"team": "=HYPERLINK(\"http://x\")" + hostile})
	rs, err := report.ReadFiles([]string{p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		rs[i].RunID = "20240501-" + hostile + "-x"
		rs[i].Test.Name = "=cmd|' /C calc'!A0"
		rs[i].Target.Path = "/mnt/" + hostile
	}
	var buf bytes.Buffer
	report.NDJSON(&buf, rs)
	os.WriteFile(p, buf.Bytes(), 0o644)
	if _, e, code := execute(t, "history", "import", "--db", db, p); code != 0 {
		t.Fatalf("import: %s", e)
	}
	for _, args := range [][]string{
		{"history", "--db", db},
		{"history", "show", "--db", db, "20240501"},
		{"history", "show", "--db", db, "20240501", "-o", "md"},
		{"report", p},
		{"analyze", p},
		{"compare", p, p},
		{"history", "rm", "--db", db, "20240501"},
	} {
		out, errOut, code := execute(t, args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
		noControls(t, strings.Join(args[:2], " "), out+errOut)
	}
	for _, args := range [][]string{{"report", p, "-o", "csv"}, {"compare", p, p, "-o", "csv"}} {
		out, _, _ := execute(t, args...)
		noControls(t, "csv", out)
		for _, l := range strings.Split(out, "\n") {
			for _, cell := range strings.Split(l, ",") {
				if c := strings.TrimPrefix(cell, `"`); c != "" && strings.ContainsRune("=+@", rune(c[0])) {
					t.Errorf("%v: a cell starts a formula: %q", args, cell)
				}
			}
		}
	}
	// JSON keeps the data as it is, escaped: nothing raw that a terminal
	// would obey, and it reads back the same.
	if _, e, code := execute(t, "history", "import", "--db", db, p); code != 0 {
		t.Fatalf("import again: %s", e)
	}
	for _, args := range [][]string{{"report", p, "-o", "json"}, {"report", p, "-o", "ndjson"}, {"history", "--db", db, "-o", "json"}} {
		out, _, _ := execute(t, args...)
		noControls(t, strings.Join(args, " "), out)
		if !strings.Contains(out, `\u001b]0;owned`) || !strings.Contains(out, `\u009b31m\u202e`) {
			t.Errorf("%v no longer carries the run id as it is: %.300s", args, out)
		}
	}
	// HTML on standard output and in --html files: the page carries the
	// run id escaped, nothing raw, on every command that writes one.
	html := filepath.Join(dir, "page.html")
	for _, args := range [][]string{
		{"report", p, "-o", "html"},
		{"analyze", p, "-o", "html"},
		{"compare", p, p, "-o", "html"},
		{"history", "show", "--db", db, "20240501", "-o", "html"},
		{"report", p, "--html", html},
		{"compare", p, p, "--html", html},
	} {
		os.Remove(html)
		out, errOut, code := execute(t, args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
		if b, err := os.ReadFile(html); err == nil {
			out = string(b)
		}
		noControls(t, strings.Join(args, " "), out)
		if !strings.Contains(out, `\u001b]0;owned`) {
			t.Errorf("%v: the page no longer shows the run id: %.300s", args, out)
		}
	}
	// A file that is not there gets a hint, its name filtered.
	_, errOut, code := execute(t, "report", filepath.Join(dir, "no"+hostile))
	noControls(t, "the error", errOut)
	if code != 1 || !strings.Contains(errOut, "hint: check the name") {
		t.Errorf("a missing file: exit %d, %q", code, errOut)
	}
	// A label may not carry a bidi override.
	if _, errOut, code := execute(t, "run", "--label", "team=\u202eevil", "--fio", "/nonexistent/fio", dir); code != 2 || !strings.Contains(errOut, "bidirectional") {
		t.Errorf("--label with a bidi override: exit %d, %q", code, errOut)
	}
}

// hostileHTTP answers every connection with a status line that holds
// escape sequences.
func hostileHTTP(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				c.Write([]byte("HTTP/1.1 503 " + hostile + "Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			}()
		}
	}()
	return "http://" + l.Addr().String()
}

// Issue 27.5: an HTTP status line from the server prints filtered, in
// iolens etcd and in watch --etcd.
func TestTerminalFilterHTTP(t *testing.T) {
	url := hostileHTTP(t)
	out, errOut, code := execute(t, "etcd", url)
	if code != 1 || !strings.Contains(out+errOut, "503") {
		t.Fatalf("etcd: exit %d: %s%s", code, out, errOut)
	}
	noControls(t, "etcd", out+errOut)
	out, errOut, _ = execute(t, "etcd", url, "-o", "json")
	noControls(t, "etcd -o json", out+errOut)

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
	out, errOut, _ = execute(t, "watch", "vdb", "--proc-root", proc, "--sys-root", sys, "--interval", "200ms", "--duration", "1s",
		"--top", "0", "--etcd", url, "--etcd-window", "1s", "-o", "text")
	if !strings.Contains(out+errOut, "503") {
		t.Errorf("watch --etcd never said what the server answered:\n%s%s", out, errOut)
	}
	noControls(t, "watch --etcd", out+errOut)
	out, errOut, _ = execute(t, "watch", "vdb", "--proc-root", proc, "--sys-root", sys, "--interval", "200ms", "--duration", "1s",
		"--top", "0", "--etcd", url, "--etcd-window", "1s", "-o", "ndjson")
	noControls(t, "watch --etcd -o ndjson", out+errOut)
}

// Issue 27.5: what a run's progress prints (a test's name, fio's
// messages) is filtered; the live line's own codes are not.
func TestTerminalFilterProgress(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(newScreen(&b), false)
	p.Line("fio: %s", hostile)
	p.Event(runner.Event{Kind: runner.EventInfo, Message: "fio stderr: " + hostile})
	p.Event(runner.Event{Kind: runner.EventTestEnd, Index: 1, Total: 1, Test: result.TestSpec{Name: "t" + hostile}, Result: &result.Result{Status: "failed", Error: hostile}})
	noControls(t, "progress", b.String())
	if !strings.Contains(b.String(), "fio stderr: ") {
		t.Errorf("progress lost the message: %q", b.String())
	}
}
