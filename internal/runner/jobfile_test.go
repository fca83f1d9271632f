package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/result"
)

// hostileJobFiles are the job files of issue 12 that made fio run
// commands, read or write files outside the scratch directory, change
// system settings or take its values from the environment, each
// reproduced on a read job too (reads used to skip the device checks).
// The key names what must appear in the error.
var hostileJobFiles = []struct{ name, text, names string }{
	{"exec_prerun", "[a]\nrw=write\nexec_prerun=touch /tmp/iolens-pwned\n", "exec_prerun"},
	{"exec_prerun on a read", "[a]\nrw=read\nexec_prerun=touch /tmp/iolens-pwned\n", "exec_prerun"},
	{"exec_postrun", "[a]\nrw=read\nexec_postrun=rm -rf /tmp/x\n", "exec_postrun"},
	{"exec_prerun with a comment", "[a]\nrw=read\nexec_prerun=ls;rm -rf /\n", "exec_prerun"},
	{"exec_prerun in a later global", "[global]\nrw=read\n[global-2]\nexec_prerun=id\n[a]\n", "exec_prerun"},
	{"exec_prerun spaced", "[a]\nexec_prerun  =  id\n", "exec_prerun"},
	{"ioengine=exec", "[a]\nioengine=exec\nprogram=/bin/sh\n", "ioengine"},
	{"ioengine=external", "[a]\nioengine=external:/tmp/evil.so\n", "ioengine"},
	{"ioengine=path", "[a]\nioengine=/tmp/evil.so\n", "ioengine"},
	{"ioengine=filedelete", "[a]\nrw=read\nioengine=filedelete\n", "ioengine"},
	{"ioengine=filecreate", "[a]\nioengine=filecreate\n", "ioengine"},
	{"ioengine=sg", "[a]\nioengine=sg\n", "ioengine"},
	{"include space", "[a]\ninclude /etc/iolens.fio\n", "include"},
	{"include=", "[a]\ninclude=/etc/iolens.fio\n", "include"},
	{"include tab", "[a]\ninclude\t/etc/iolens.fio\n", "include"},
	{"include glued", "[a]\ninclude/etc/iolens.fio\n", "include"},
	{"include in global", "[global]\n  include x.fio\n[a]\n", "include"},
	{"mem=mmap:PATH", "[a]\nmem=mmap:/etc/hostname\n", "mem"},
	{"iomem=mmapshared:PATH", "[a]\nrw=read\niomem=mmapshared:/tmp/victim\n", "iomem"},
	{"mem=mmaphuge:PATH", "[a]\nmem=mmaphuge:/hugepages/x\n", "mem"},
	{"write_iolog", "[a]\nrw=read\nwrite_iolog=/etc/cron.d/x\n", "write_iolog"},
	{"read_iolog", "[a]\nrw=read\nread_iolog=/tmp/log\n", "read_iolog"},
	{"replay_redirect", "[a]\nrw=read\nread_iolog=/tmp/log\nreplay_redirect=/dev/sda\n", "read_iolog"},
	{"replay_redirect alone", "[a]\nrw=read\nreplay_redirect=/dev/sda\n", "replay_redirect"},
	{"trigger", "[a]\ntrigger=reboot\n", "trigger"},
	{"trigger-file", "[a]\ntrigger-file=/tmp/t\n", "trigger-file"},
	{"trigger-cmd", "[a]\ntrigger-cmd=reboot\n", "trigger-cmd"},
	{"cgroup", "[a]\ncgroup=/sys/fs/cgroup/x\n", "cgroup"},
	{"cgroup_weight", "[a]\ncgroup_weight=1000\n", "cgroup_weight"},
	{"uid", "[a]\nuid=0\n", "uid"},
	{"gid", "[a]\ngid=0\n", "gid"},
	{"ioscheduler", "[a]\nrw=read\nioscheduler=none\n", "ioscheduler"},
	{"env expansion", "[a]\nsize=${SIZE}\n", "$"},
	{"env expansion in a name", "[a]\n${OPT}=1\n", "$"},
	{"keyword with bc", "[a]\nsize=8*$mb_memory\n", "$"},
	{"keyword ncpus", "[a]\nnumjobs=$ncpus\n", "$"},
	{"opendir", "[a]\nrw=read\nopendir=/etc\n", "opendir"},
	{"filename_format", "[a]\nfilename_format=/etc/x.$jobnum\n", "$"},
	{"filename_format plain", "[a]\nfilename_format=/etc/x\n", "filename_format"},
	{"nrfiles", "[a]\nnrfiles=100000\n", "nrfiles"},
	{"unlink", "[a]\nunlink=1\n", "unlink"},
	{"write_bw_log", "[a]\nwrite_bw_log=/etc/x\n", "write_bw_log"},
	{"write_hist_log", "[a]\nwrite_hist_log=/etc/x\n", "write_hist_log"},
	{"fill_device", "[a]\nrw=write\nfill_device=1\n", "fill_device"},
	{"allow_mounted_write", "[a]\nallow_mounted_write=1\n", "allow_mounted_write"},
	{"lockmem", "[a]\nlockmem=100g\n", "lockmem"},
	{"verify_state_load", "[a]\nverify_state_load=1\n", "verify_state_load"},
	{"verify_dump", "[a]\nverify_dump=1\n", "verify_dump"},
	{"continue_on_error", "[a]\ncontinue_on_error=all\n", "continue_on_error"},
	{"profile", "[a]\nprofile=tiobench\n", "profile"},
	{"kb_base", "[a]\nkb_base=1000\n", "kb_base"},
	{"gtod_reduce", "[a]\ngtod_reduce=1\n", "gtod_reduce"},
	{"trim", "[a]\nrw=trim\n", "rw"},
	{"prioclass realtime", "[a]\nprioclass=1\n", "prioclass"},
	{"negative nice", "[a]\nnice=-20\n", "nice"},
	{"upper case", "[a]\nEXEC_PRERUN=id\n", "EXEC_PRERUN"},
	{"unknown", "[a]\nfrobnicate=1\n", "frobnicate"},
	{"escape sequence", "[a]\ndescription=\x1b]0;pwned\x07\n", "0x1b"},
	{"duplicate section", "[a]\n[a]\n", "second section"},
}

// badNumbers are job file values issue 12 found accepted: each is refused
// with the range that is accepted.
var badNumbers = []struct{ name, text, names string }{
	{"numjobs=0", "[a]\nnumjobs=0\n", "numjobs"},
	{"numjobs negative", "[a]\nnumjobs=-4\n", "numjobs"},
	{"numjobs overflow", "[a]\nnumjobs=99999999999999999999\n", "numjobs"},
	{"numjobs hex", "[a]\nnumjobs=0x10\n", "numjobs"},
	{"numjobs huge", "[a]\nnumjobs=100000\n", "numjobs"},
	{"bs=0", "[a]\nbs=0\n", "bs"},
	{"bs=NaN", "[a]\nbs=NaN\n", "bs"},
	{"bs=Inf", "[a]\nblocksize=Inf\n", "blocksize"},
	{"bs exponent", "[a]\nbs=1e3\n", "bs"},
	{"bs per direction", "[a]\nbs=4k,8k\n", "bs"},
	{"bs too large", "[a]\nbs=1g\n", "bs"},
	{"size NaN", "[a]\nsize=NaN\n", "size"},
	{"size overflow", "[a]\nsize=99999999999999999999T\n", "size"},
	{"size percent", "[a]\nsize=50%\n", "size"},
	{"iodepth=0", "[a]\niodepth=0\n", "iodepth"},
	{"iodepth NaN", "[a]\niodepth=nan\n", "iodepth"},
	{"runtime NaN", "[a]\nruntime=NaN\n", "runtime"},
	{"runtime Inf", "[a]\nruntime=Inf\n", "runtime"},
	{"runtime negative", "[a]\nruntime=-1\n", "runtime"},
	{"runtime years", "[a]\nruntime=100000h\n", "runtime"},
	{"ramp_time overflow", "[a]\nramp_time=1e400\n", "ramp_time"},
	{"thinktime NaN", "[a]\nthinktime=NaN\n", "thinktime"},
	{"rwmixread 101", "[a]\nrw=randrw\nrwmixread=101\n", "rwmixread"},
	{"rate NaN", "[a]\nrate=NaN\n", "rate"},
	{"rate_iops triple", "[a]\nrate_iops=1,2,3\n", "rate_iops"},
	{"zipf NaN", "[a]\nrandom_distribution=zipf:NaN\n", "random_distribution"},
	{"verify_pattern NaN", "[a]\nverify=pattern\nverify_pattern=nan\n", "verify_pattern"},
	{"direct=2", "[a]\ndirect=2\n", "direct"},
	{"time_based without runtime", "[a]\ntime_based\n", "time_based"},
	{"buffers", "[a]\nbs=64m\niodepth=4096\n", "iodepth"},
	{"bssplit over 100", "[a]\nbssplit=4k/60:64k/60\n", "bssplit"},
	{"cpus_allowed junk", "[a]\ncpus_allowed=all\n", "cpus_allowed"},
	// fio checks its runtime only between IOs: a wait longer than the
	// runtime stretches the test (thinktime=20s made runtime=2 last 20 s).
	{"thinktime past the runtime", "[a]\nruntime=2\ntime_based\nthinktime=20s\n", "thinktime"},
	{"thinktime and spin past the runtime", "[a]\nruntime=2\nthinktime=1500ms\nthinktime_spin=1s\n", "thinktime"},
	{"thinktime a week", "[a]\nruntime=7d\ntime_based\nthinktime=7d\n", "thinktime"},
	{"thinktime past the bound of a test without runtime", "[a]\nsize=1m\nthinktime=2h\n", "thinktime"},
	{"startdelay past the runtime", "[a]\nruntime=2\nstartdelay=1m\n", "startdelay"},
}

func TestJobFilesRefused(t *testing.T) {
	refused := 0
	for _, set := range [][]struct{ name, text, names string }{hostileJobFiles, badNumbers} {
		for _, tc := range set {
			t.Run(tc.name, func(t *testing.T) {
				_, err := SuiteFromJobFile("hostile.fio", tc.text)
				var oe *JobOptionError
				var fe *JobFileError
				if !errors.As(err, &oe) && !errors.As(err, &fe) {
					t.Fatalf("err = %v, want a JobOptionError or a JobFileError", err)
				}
				if !strings.Contains(err.Error(), tc.names) {
					t.Errorf("error %q does not name %q", err, tc.names)
				}
				var h interface{ Hint() string }
				if !errors.As(err, &h) || h.Hint() == "" {
					t.Errorf("error %q has no hint", err)
				}
				refused++
			})
		}
	}
	t.Logf("%d hostile or out-of-range job files refused", refused)
}

// A refused number says what is accepted.
func TestJobFileNumbersGiveTheRange(t *testing.T) {
	for in, want := range map[string]string{
		"[a]\nnumjobs=0\n":     "from 1 to 64",
		"[a]\nbs=0\n":          "from 1 to 64M",
		"[a]\niodepth=0\n":     "from 1 to 4096",
		"[a]\nruntime=NaN\n":   "at most 168h",
		"[a]\nrwmixread=101\n": "from 0 to 100",
	} {
		_, err := SuiteFromJobFile("n.fio", in)
		var h interface{ Hint() string }
		if !errors.As(err, &h) || !strings.Contains(h.Hint(), want) {
			t.Errorf("%q: err %v, hint %q; want the hint to say %q", in, err, hintOf(err), want)
		}
	}
}

func hintOf(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}

// Options iolens accepts are written back in a canonical form, so fio
// reads exactly what was checked.
func TestJobFileCanonical(t *testing.T) {
	in := `[global]
ioengine=io_uring
direct=1
runtime=2.5
ramp_time=1500ms
time_based
[t]
rw=randrw
rwmixwrite=30
bs=8k
iodepth=16
numjobs=2
rate=1m,2m
thinktime=1ms
bssplit=4k/50:64k/
cpus_allowed=0-1
verify=crc32c
verify_pattern=0xDEADbeef
random_distribution=zipf:1.20
norandommap
mem=mmapshared
`
	s, err := SuiteFromJobFile("c.fio", in)
	if err != nil {
		t.Fatal(err)
	}
	tt := s.Tests[0]
	if tt.RW != "randrw" || tt.RWMixRead != 70 || tt.BlockSize != 8192 || tt.IODepth != 16 || tt.NumJobs != 2 || !tt.Direct ||
		tt.IOEngine != "io_uring" || tt.RuntimeS != 2.5 || tt.RampS != 1.5 || !tt.TimeBased() || tt.OwnFile {
		t.Fatalf("test = %+v", tt)
	}
	want := map[string]string{"rate": "1048576,2097152", "thinktime": "1000", "bssplit": "4096/50:65536/", "cpus_allowed": "0-1",
		"verify": "crc32c", "verify_pattern": "0xdeadbeef", "random_distribution": "zipf:1.2", "norandommap": "", "mem": "mmapshared"}
	if len(tt.Options) != len(want) {
		t.Errorf("options = %+v", tt.Options)
	}
	for _, o := range tt.Options {
		if w, ok := want[o.Key]; !ok || w != o.Value {
			t.Errorf("option %s=%q, want %q", o.Key, o.Value, w)
		}
	}
	// fio itself accepts what iolens writes.
	r := &runner{cfg: Config{SampleInterval: 1e9}, scratch: t.TempDir(), sharedFile: "/tmp/x", target: result.Target{SizeBytes: 1 << 30}}
	jf, err := r.jobFile(tt, "/tmp/log")
	if err != nil {
		t.Fatal(err)
	}
	checkFioParses(t, jf.String())
}

// mustJob renders test s as r would run it.
func mustJob(t testing.TB, r *runner, s result.TestSpec, logPrefix string) string {
	t.Helper()
	jf, err := r.jobFile(s, logPrefix)
	if err != nil {
		t.Fatalf("placing %s: %v", s.Name, err)
	}
	return jf.String()
}

// checkFioParses runs fio --parse-only on a job file, when fio is here.
func checkFioParses(t *testing.T, job string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "j.fio")
	if err := os.WriteFile(path, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := fio.Version(context.Background(), "fio"); err != nil {
		t.Logf("fio is not installed: the job file is not checked with fio --parse-only")
		return
	}
	cmd := fio.Command{Args: []string{"--parse-only", path}}
	if run, err := cmd.Exec(context.Background()); err != nil && !errors.Is(err, fio.ErrNoDocument) {
		t.Errorf("fio --parse-only refused iolens's job file: %v (%+v)\n%s", err, run, job)
	}
}

// Seed 000's jobs.fio runs as written: its filename is replaced by
// iolens's file with a note, and each test stops at 10 GiB or 300 s.
func TestSeed000JobFile(t *testing.T) {
	b, err := os.ReadFile("testdata/seed000-jobs.fio")
	if err != nil {
		t.Fatal(err)
	}
	s, err := SuiteFromJobFile("jobs.fio", string(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tests) != 8 {
		t.Fatalf("%d tests, want 8", len(s.Tests))
	}
	aks, _ := LookupSuite("aks-2019")
	for i, tt := range s.Tests {
		if tt.SizeBytes != 10<<30 || tt.RuntimeS != 300 || tt.TimeBased() || tt.IOEngine != "libaio" || tt.OwnFile {
			t.Errorf("%s = %+v", tt.Name, tt)
		}
		if len(tt.Notes) != 1 || !strings.Contains(tt.Notes[0], "filename=/tmp/fio-test-file is not used") {
			t.Errorf("%s notes = %q", tt.Name, tt.Notes)
		}
		// The built-in suite reproduces the seed test for test.
		b := aks.Tests[i]
		if b.RW != tt.RW || b.BlockSize != tt.BlockSize || b.IODepth != tt.IODepth || b.Direct != tt.Direct || b.SizeBytes != tt.SizeBytes ||
			b.RuntimeS != tt.RuntimeS || b.TimeBased() != tt.TimeBased() || b.IOEngine != tt.IOEngine {
			t.Errorf("aks-2019 test %d = %s, the seed's is %s", i+1, b.Summary(), tt.Summary())
		}
		if len(tt.Options) != 3 { // group_reporting, thread, cpus_allowed
			t.Errorf("%s options = %+v", tt.Name, tt.Options)
		}
	}
	scratch := t.TempDir()
	r := &runner{cfg: Config{SampleInterval: 1e9}, engine: "libaio", scratch: scratch, sharedFile: filepath.Join(scratch, "iolens.dat"), target: result.Target{SizeBytes: 10 << 30}}
	job := mustJob(t, r, r.effective(s.Tests[0]), filepath.Join(scratch, "t"))
	for _, want := range []string{"filename=" + filepath.Join(scratch, "iolens.dat") + "\n", "size=10737418240\n", "runtime=300\n", "cpus_allowed=1\n", "thread\n"} {
		if !strings.Contains(job, want) {
			t.Errorf("job file lacks %q:\n%s", want, job)
		}
	}
	if strings.Contains(job, "/tmp/fio-test-file") || strings.Contains(job, "time_based") {
		t.Errorf("job file uses the seed's path or time_based:\n%s", job)
	}
	checkFioParses(t, job)
}

// A filename or directory pointing elsewhere is never honoured, even as
// one of fio's ':' lists.
func TestJobFileFilenameNeverHonoured(t *testing.T) {
	for _, in := range []string{
		"[a]\nfilename=/etc/passwd:/etc/shadow\nrw=write\n",
		"[global]\ndirectory=/etc\n[a]\nrw=write\nsize=1m\n",
		"[a]\nfilename=/dev/sda\nrw=read\n",
	} {
		s, err := SuiteFromJobFile("f.fio", in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		tt := s.Tests[0]
		if len(tt.Notes) == 0 {
			t.Errorf("%q: no note", in)
		}
		scratch := t.TempDir()
		r := &runner{cfg: Config{SampleInterval: 1e9}, scratch: scratch, sharedFile: filepath.Join(scratch, "iolens.dat"), target: result.Target{SizeBytes: 1 << 20}}
		job := mustJob(t, r, tt, filepath.Join(scratch, "t"))
		for _, bad := range []string{"/etc", "/dev/sda", "directory"} {
			if strings.Contains(job, bad) {
				t.Errorf("%q: the job file iolens runs contains %q:\n%s", in, bad, job)
			}
		}
	}
}

// Run checks every test, whatever built it, before it runs anything:
// a spec carrying a refused option never reaches fio (here, a fio that
// does not exist would be the first thing to fail).
func TestRunChecksSpecsFirst(t *testing.T) {
	base := result.TestSpec{Name: "r", RW: "read", BlockSize: 4096, IODepth: 1, NumJobs: 1, IOEngine: "psync", RuntimeS: 1}
	with := func(f func(*result.TestSpec)) result.TestSpec { s := base; f(&s); return s }
	for name, spec := range map[string]result.TestSpec{
		"exec_prerun":    with(func(s *result.TestSpec) { s.Options = []result.Option{{Key: "exec_prerun", Value: "id"}} }),
		"filename":       with(func(s *result.TestSpec) { s.Options = []result.Option{{Key: "filename", Value: "/etc/passwd"}} }),
		"engine":         with(func(s *result.TestSpec) { s.IOEngine = "exec" }),
		"rw":             with(func(s *result.TestSpec) { s.RW = "trim" }),
		"numjobs":        with(func(s *result.TestSpec) { s.NumJobs = -1 }),
		"NaN runtime":    with(func(s *result.TestSpec) { s.RuntimeS = nan() }),
		"global name":    with(func(s *result.TestSpec) { s.Name = "global" }),
		"value in range": with(func(s *result.TestSpec) { s.Options = []result.Option{{Key: "rate", Value: "NaN"}} }),
	} {
		err := Run(context.Background(), Config{Suite: result.Suite{Name: "s", Tests: []result.TestSpec{spec}}, FioBinary: "/nonexistent/fio", Dir: t.TempDir()},
			func(result.Result) error { return nil }, nil)
		var se *SpecError
		if !errors.As(err, &se) || se.Hint() == "" {
			t.Errorf("%s: err = %v, want a SpecError with a hint", name, err)
		}
	}
	for name, cfg := range map[string]Config{
		"runtime NaN": {RuntimeS: nan()},
		"ramp Inf":    {RampS: inf()},
		"max-runtime": {MaxRuntimeS: -1},
	} {
		cfg.Suite, cfg.FioBinary, cfg.Dir = result.Suite{Name: "s", Tests: []result.TestSpec{base}}, "/nonexistent/fio", t.TempDir()
		if err := Run(context.Background(), cfg, func(result.Result) error { return nil }, nil); err == nil || !strings.Contains(hintOf(err), "seconds from 0") {
			t.Errorf("%s: err = %v (hint %q), want the range", name, err, hintOf(err))
		}
	}
}

func nan() float64 { z := 0.0; return z / z }
func inf() float64 { z := 0.0; return 1 / z }

// Every built-in suite passes the checks job files go through.
func TestBuiltinSuitesPassTheChecks(t *testing.T) {
	for _, s := range Suites() {
		if err := checkSuite(s); err != nil {
			t.Errorf("suite %s: %v", s.Name, err)
		}
	}
}

// TestReadJobFileHostile: a FIFO, a device and an oversized file are
// refused at once, without blocking or loading them.
func TestReadJobFileHostile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.fio")
	if err := os.WriteFile(big, bytes.Repeat([]byte("# x\n"), fio.MaxJobFileBytes/4+1), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := filepath.Join(dir, "ok.fio")
	if err := os.WriteFile(ok, []byte("[r]\nrw=randread\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for path, want := range map[string]string{fifo: "not a regular file", "/dev/zero": "not a regular file", dir: "not a regular file", big: "more than the", filepath.Join(dir, "none"): "no such file"} {
			_, err := ReadJobFile(path)
			var je *JobFileError
			if err == nil || !errors.As(err, &je) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want a JobFileError saying %q", path, err, want)
			}
		}
		if s, err := ReadJobFile(ok); err != nil || !strings.Contains(s, "randread") {
			t.Errorf("a plain job file: %q, %v", s, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ReadJobFile blocked")
	}
}
