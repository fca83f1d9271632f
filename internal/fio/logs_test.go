package fio

import (
	"strings"
	"testing"
)

func TestScanLog(t *testing.T) {
	in := "1000, 10245, 0, 0, 0\n1000, 4407, 1, 0, 0\n\n2001, 11998, 0, 4096, 0x0000\n"
	var got []LogEntry
	if err := ScanLog(strings.NewReader(in), func(e LogEntry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []LogEntry{{1000, 10245, 0, 0}, {1000, 4407, 1, 0}, {2001, 11998, 0, 4096}}
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"1000, 5\n", "x, 1, 0, 0\n", "1000, 1, 7, 0\n"} {
		if err := ScanLog(strings.NewReader(bad), func(LogEntry) error { return nil }); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseJobFile(t *testing.T) {
	in := `; comment
[global]
ioengine=libaio   # sync|libaio|mmap
group_reporting
size=10g          # Size of test file

[test1]
direct=1
readwrite=write
blocksize=4k
[test2]
rw=randread
`
	jf, err := ParseJobFile(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(jf.Global) != 3 || jf.Global[0] != (KV{"ioengine", "libaio"}) || jf.Global[1] != (KV{Key: "group_reporting"}) || jf.Global[2] != (KV{"size", "10g"}) {
		t.Errorf("global = %+v", jf.Global)
	}
	if len(jf.Jobs) != 2 || jf.Jobs[0].Name != "test1" || len(jf.Jobs[0].Options) != 3 || jf.Jobs[1].Options[0] != (KV{"rw", "randread"}) {
		t.Errorf("jobs = %+v", jf.Jobs)
	}
	round, err := ParseJobFile(jf.String())
	if err != nil || len(round.Jobs) != 2 || len(round.Global) != 3 {
		t.Errorf("round trip: %+v, %v", round, err)
	}
	for _, bad := range []string{"", "[global]\nrw=read\n", "rw=read\n[a]\n", "[a\nrw=read\n", "[a]\ninclude other.fio\n", "[a]\nsize=${SIZE}\n"} {
		if _, err := ParseJobFile(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}
