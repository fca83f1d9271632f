package watch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseKubePath(t *testing.T) {
	tests := []struct {
		path, want string
	}{
		{"/kubepods/burstable/pod0f3c9a1e-5b7d-4c1a-9e2f-1234567890ab/3f1e2d4c5b6a79880123456789abcdef0123456789abcdef0123456789abcdef",
			"burstable 0f3c9a1e-5b7d-4c1a-9e2f-1234567890ab 3f1e2d4c5b6a79880123456789abcdef0123456789abcdef0123456789abcdef"},
		{"/kubepods/pod0f3c9a1e-5b7d-4c1a-9e2f-1234567890ab", "guaranteed 0f3c9a1e-5b7d-4c1a-9e2f-1234567890ab "},
		{"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0f3c9a1e_5b7d_4c1a_9e2f_1234567890ab.slice/cri-containerd-aabbccddeeff00112233.scope",
			"besteffort 0f3c9a1e-5b7d-4c1a-9e2f-1234567890ab aabbccddeeff00112233"},
		{"/kubepods.slice/kubepods-pod0f3c9a1e_5b7d_4c1a_9e2f_1234567890ab.slice/crio-aabbccddeeff.scope",
			"guaranteed 0f3c9a1e-5b7d-4c1a-9e2f-1234567890ab aabbccddeeff"},
		{"/system.slice/docker-aabbccddeeff.scope", ""},
		{"/kubepods/burstable", ""},
	}
	for _, tt := range tests {
		ref, ok := ParseKubePath(tt.path)
		got := ""
		if ok {
			got = ref.QoS + " " + ref.UID + " " + ref.ContainerID
		}
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.path, got, tt.want)
		}
	}
}

// TestCgroupsV1 attributes IO on a fixture blkio hierarchy: fio in a pod
// and the root cgroup (kernel writeback), on two devices of which one is
// watched.
func TestCgroupsV1(t *testing.T) {
	root := t.TempDir()
	const uid = "0f3c9a1e-5b7d-4c1a-9e2f-1234567890ab"
	pod := filepath.Join(root, "blkio/kubepods/besteffort/pod"+uid+"/abcdef0123456789")
	write := func(p, s string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	counters := func(dir string, rb, wb, r, w int) {
		write(filepath.Join(dir, "blkio.throttle.io_service_bytes"), strings.Join([]string{
			"253:0 Read " + itoa(rb), "253:0 Write " + itoa(wb), "253:0 Sync 0", "253:0 Async 0", "253:0 Total " + itoa(rb+wb),
			"7:3 Read 999999", "7:3 Write 999999", "Total 0"}, "\n")+"\n")
		write(filepath.Join(dir, "blkio.throttle.io_serviced"), strings.Join([]string{
			"253:0 Read " + itoa(r), "253:0 Write " + itoa(w), "7:3 Write 5", "Total 0"}, "\n")+"\n")
	}
	counters(filepath.Join(root, "blkio"), 0, 1<<20, 0, 10)
	counters(pod, 0, 0, 0, 0)
	write(filepath.Join(pod, "cgroup.procs"), "4242\n")
	write(filepath.Join(root, "proc/4242/comm"), "fio\n")
	logs := filepath.Join(root, "pods")
	os.MkdirAll(filepath.Join(logs, "default_writer_"+uid, "fio"), 0o755)

	cg, err := FindCgroups(root, filepath.Join(root, "proc"))
	if err != nil || cg.V2 {
		t.Fatalf("FindCgroups: %v, %+v", err, cg)
	}
	cg.Pods = &KubeletDirs{LogDir: logs}
	mm := map[string]string{"253:0": "vda"}
	if _, err := cg.Sample(0, mm); err != nil {
		t.Fatal(err)
	}
	// Over 2 s: the pod writes 40 MiB in 10240 IOs, the root 2 MiB.
	counters(filepath.Join(root, "blkio"), 0, 3<<20, 0, 30)
	counters(pod, 0, 40<<20, 0, 10240)
	got, err := cg.Sample(2*time.Second, mm)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d entries: %+v", len(got), got)
	}
	top := got[0]
	cg.Describe(&top, 3)
	if top.Device != "vda" || top.WriteBWBytes != 20<<20 || top.WriteIOPS != 5120 || top.Name() != "default/writer" ||
		top.PodUID != uid || len(top.Processes) != 1 || top.Processes[0] != "4242 fio" {
		t.Errorf("top = %+v", top)
	}
	if got[1].Cgroup != "/" || got[1].WriteBWBytes != 1<<20 {
		t.Errorf("second = %+v", got[1])
	}
}

func TestCgroupsV2(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(s), 0o644)
	}
	write(filepath.Join(root, "cgroup.controllers"), "cpuset cpu io memory pids\n")
	// io.stat of a parent includes its children: only leaves count.
	write(filepath.Join(root, "system.slice/io.stat"), "8:0 rbytes=0 wbytes=8192 rios=0 wios=2 dbytes=0 dios=0\n")
	write(filepath.Join(root, "system.slice/db.service/io.stat"), "8:0 rbytes=0 wbytes=8192 rios=0 wios=2 dbytes=0 dios=0\n")
	cg, err := FindCgroups(root, "")
	if err != nil || !cg.V2 {
		t.Fatalf("FindCgroups: %v", err)
	}
	mm := map[string]string{"8:0": "sda"}
	cg.Sample(0, mm)
	write(filepath.Join(root, "system.slice/io.stat"), "8:0 rbytes=4096 wbytes=1056768 rios=1 wios=260 dbytes=0 dios=0\n")
	write(filepath.Join(root, "system.slice/db.service/io.stat"), "8:0 rbytes=4096 wbytes=1056768 rios=1 wios=260 dbytes=0 dios=0\n")
	got, _ := cg.Sample(time.Second, mm)
	if len(got) != 1 || got[0].Cgroup != "/system.slice/db.service" || got[0].WriteBWBytes != 1048576 || got[0].WriteIOPS != 258 || got[0].ReadIOPS != 1 {
		t.Errorf("got %+v", got)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
