package fio

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

func readSample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Expected values are read off the sample files by hand.
func TestParseSamples(t *testing.T) {
	tests := []struct {
		file      string
		docs      int
		diags     int
		jobs      int
		job0      string
		readIOPS  float64
		writeBW   int64
		syncN     uint64
		jobError  int
		diskUtils int
	}{
		{file: "randread_4k_qd8.jsonplus.json", docs: 1, jobs: 1, job0: "randread4k", readIOPS: 23412.862379, diskUtils: 1},
		{file: "status_interval_1s.json", docs: 4, jobs: 1, readIOPS: 16893.368877, diskUtils: 1},
		{file: "INVALID_json_nan_steadystate_ssdur1.json", docs: 1, jobs: 1, diskUtils: 1},
		{file: "error_einval.stdout.json", docs: 1, diags: 1, jobs: 1, job0: "errjob", jobError: 22, diskUtils: 1},
		{file: "etcd_fdatasync.json", docs: 1, jobs: 1, writeBW: 6170866, syncN: 10029, diskUtils: 1},
		{file: "client_server_2hosts.json", docs: 1, jobs: 2},
		{file: "no_group_reporting_numjobs2.json", docs: 1, jobs: 2, job0: "nogr", readIOPS: 15894.052974, diskUtils: 1},
		{file: "tmpfs_direct1.json", docs: 1, jobs: 1, diskUtils: 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			docs, diags, err := Parse(readSample(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if len(docs) != tt.docs {
				t.Fatalf("docs = %d, want %d", len(docs), tt.docs)
			}
			if tt.diags > 0 && len(diags) < tt.diags {
				t.Errorf("diagnostics = %q, want at least %d", diags, tt.diags)
			}
			last := docs[len(docs)-1]
			jobs := last.AllJobs()
			if len(jobs) != tt.jobs {
				t.Fatalf("jobs = %d, want %d", len(jobs), tt.jobs)
			}
			if last.FioVersion != "fio-3.33" {
				t.Errorf("version = %q", last.FioVersion)
			}
			j := jobs[0]
			if tt.job0 != "" && j.JobName != tt.job0 {
				t.Errorf("jobname = %q, want %q", j.JobName, tt.job0)
			}
			if tt.readIOPS != 0 && j.Read.IOPS != tt.readIOPS {
				t.Errorf("read iops = %v, want %v", j.Read.IOPS, tt.readIOPS)
			}
			if tt.writeBW != 0 && j.Write.BWBytes != tt.writeBW {
				t.Errorf("write bw_bytes = %v, want %v", j.Write.BWBytes, tt.writeBW)
			}
			if j.Sync.LatNs.N != tt.syncN {
				t.Errorf("sync N = %d, want %d", j.Sync.LatNs.N, tt.syncN)
			}
			if j.Error != tt.jobError {
				t.Errorf("error = %d, want %d", j.Error, tt.jobError)
			}
			if len(last.DiskUtil) != tt.diskUtils && !strings.HasPrefix(tt.file, "client") {
				t.Errorf("disk_util entries = %d, want %d", len(last.DiskUtil), tt.diskUtils)
			}
			if len(last.Raw) == 0 {
				t.Error("raw document not kept")
			}
		})
	}
}

func TestParseStatusIntervalIsCumulative(t *testing.T) {
	docs, _, err := Parse(readSample(t, "status_interval_1s.json"))
	if err != nil {
		t.Fatal(err)
	}
	// From the file: io_bytes per dump.
	want := []int64{76996608, 136699904, 201277440, 207654912}
	for i, d := range docs {
		if got := d.Jobs[0].Read.IOBytes; got != want[i] {
			t.Errorf("doc %d io_bytes = %d, want %d", i, got, want[i])
		}
	}
}

func TestParseClientModeSkipsAllClients(t *testing.T) {
	docs, diags, err := Parse(readSample(t, "client_server_2hosts.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(diags) == 0 || !strings.HasPrefix(diags[0], "<") {
		t.Errorf("host-prefixed text before the JSON should be a diagnostic, got %q", diags)
	}
	for _, j := range docs[0].AllJobs() {
		if j.JobName == "All clients" {
			t.Error("All clients entry should be left out")
		}
		if j.Hostname == "" {
			t.Error("client-mode job without hostname")
		}
	}
}

func TestParseErrors(t *testing.T) {
	if _, _, err := Parse([]byte("fio: no such file\n")); !errors.Is(err, ErrNoDocument) {
		t.Errorf("no JSON: err = %v, want ErrNoDocument", err)
	}
	if _, _, err := Parse([]byte("{\n  \"jobs\" : [\n")); err == nil || !strings.Contains(err.Error(), "ends inside") {
		t.Errorf("truncated: err = %v", err)
	}
}

func TestDecodeTolerates(t *testing.T) {
	in := "{\n  \"fio version\" : \"fio-3.33\",\n  \"jobs\" : [ { \"jobname\" : \"a\nb\", \"read\" : { \"iops\" : -nan, \"bw_mean\" : inf } } ]\n}\n"
	docs, _, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := docs[0].Jobs[0].JobName; got != "a\nb" {
		t.Errorf("jobname = %q", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"randread_4k_qd8.jsonplus.json", "status_interval_1s.json", "error_einval.stdout.json", "INVALID_json_nan_steadystate_ssdur1.json"} {
		f.Add(readSample(f, s))
	}
	f.Add([]byte("{\n}\n{\n"))
	f.Add([]byte("text\n{\n\"a\": \"}\"\n}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		docs, _, err := Parse(b)
		if err == nil && len(docs) == 0 {
			t.Error("no error and no documents")
		}
	})
}

// fio 3.39 turned multi-server "global options" into an array of objects
// and lists value-less options as "". The fixture is written by hand to
// that format; its figures are round numbers so the expected merge is easy
// to check: 20000 + 10000 IOs at 399360 ns and 1597440 ns.
func TestParse339ClientArray(t *testing.T) {
	docs, diags, err := Parse(readSample(t, "client_3.39_global_array.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(diags) != 1 {
		t.Errorf("diagnostics = %q", diags)
	}
	jobs := docs[0].AllJobs()
	if len(jobs) != 2 || jobs[0].Hostname != "host1" || jobs[1].Hostname != "host2" {
		t.Fatalf("jobs = %+v", jobs)
	}
	var h result.Histogram
	for _, j := range jobs {
		b, _ := result.HistogramFromBins(j.Read.LatNs.Bins)
		h.Merge(&b)
	}
	if h.Count() != 30000 || h.Percentile(50) != 399360 || h.Percentile(90) != 1597440 {
		t.Errorf("merged: n=%d p50=%v p90=%v", h.Count(), h.Percentile(50), h.Percentile(90))
	}
}

// ParseReader reads what Parse reads, and whatever fio output it accepts
// converts into result figures that JSON can hold (finite numbers), so
// that a record never fails to encode later.
func FuzzParseReader(f *testing.F) {
	for _, s := range []string{"randread_4k_qd8.jsonplus.json", "status_interval_1s.json", "error_einval.stdout.json",
		"INVALID_json_nan_steadystate_ssdur1.json", "etcd_fdatasync.json", "client_server_2hosts.json"} {
		f.Add(readSample(f, s))
	}
	f.Add([]byte("{\n\"jobs\": [{\"jobname\": \"a\", \"read\": {\"iops\": nan, \"bw_bytes\": 1, \"total_ios\": 1, \"lat_ns\": {\"N\": 1, \"mean\": -nan, \"bins\": {\"1000\": 1}}}}]\n}\n"))
	f.Add([]byte("{\n\"jobs\": [{\"read\": {\"iops\": 1e308, \"total_ios\": 9223372036854775807, \"runtime\": -1, \"lat_ns\": {\"N\": 18446744073709551615, \"bins\": {\"99999999999999999999\": 5, \"-1\": 1, \"nan\": 2}}}}]\n}\n"))
	f.Add([]byte("{\n\"jobs\": [{\"sync\": {\"lat_ns\": {\"N\": 3, \"percentile\": {\"99.000000\": inf}}}}]\n}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		docs, _, err := Parse(b)
		rdocs, _, rerr := ParseReader(bytes.NewReader(b))
		if (err == nil) != (rerr == nil) || len(docs) != len(rdocs) {
			t.Fatalf("Parse: %d docs, %v; ParseReader: %d docs, %v", len(docs), err, len(rdocs), rerr)
		}
		for _, d := range docs {
			var r result.Result
			if FillFromFio(&r, d.AllJobs()) != nil {
				continue
			}
			for _, dir := range []*result.DirResult{r.Read, r.Write, r.Sync} {
				if dir == nil {
					continue
				}
				for _, v := range []float64{dir.IOPS, dir.BWBytes, dir.Lat.MinNs, dir.Lat.MeanNs, dir.Lat.MaxNs, dir.Lat.P50Ns, dir.Lat.P99Ns, dir.Lat.P9999Ns} {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("non-finite figure in %+v", *dir)
					}
				}
			}
		}
	})
}
