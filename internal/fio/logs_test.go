package fio

import (
	"errors"
	"math"
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
readwrite=write;trailing
blocksize=4k#no space before the comment
   # indented comment
[test2]
rw=randread
[global2]
bs=8k
[test3]
`
	secs, err := ParseJobFile(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(secs) != 5 {
		t.Fatalf("sections = %+v", secs)
	}
	g := secs[0]
	if !g.Global || len(g.Options) != 3 || g.Options[0] != (KV{Key: "ioengine", Value: "libaio", Line: 3}) || g.Options[1] != (KV{Key: "group_reporting", Line: 4}) || g.Options[2].Value != "10g" {
		t.Errorf("global = %+v", g)
	}
	t1 := secs[1]
	if t1.Global || t1.Name != "test1" || t1.Line != 7 || len(t1.Options) != 3 || t1.Options[1].Value != "write" || t1.Options[2].Value != "4k" {
		t.Errorf("test1 = %+v", t1)
	}
	// fio treats every section whose name starts with "global" as global.
	if !secs[3].Global || secs[3].Name != "global2" || secs[4].Global {
		t.Errorf("global2 = %+v, test3 = %+v", secs[3], secs[4])
	}
	round, err := ParseJobFile(JobFile{Global: g.Options, Jobs: secs[1:3]}.String())
	if err != nil || len(round) != 3 || len(round[0].Options) != 3 || round[2].Options[0].Value != "randread" {
		t.Errorf("round trip: %+v, %v", round, err)
	}
}

// Every construct that makes fio read something other than the text is
// refused, with the line it is on.
func TestParseJobFileRefuses(t *testing.T) {
	for in, line := range map[string]int{
		"":                                     0,
		"[global]\nrw=read\n":                  0,
		"rw=read\n[a]\n":                       1,
		"[a\nrw=read\n":                        1,
		"[a]\ninclude other.fio\n":             2,
		"[a]\ninclude\tother.fio\n":            2,
		"[a]\ninclude=other.fio\n":             2,
		"[a]\n  includeother.fio\n":            2,
		"[a]\nsize=${SIZE}\n":                  2,
		"[a]\nsize=8*$mb_memory\n":             2,
		"[a]\nnumjobs=$ncpus\n":                2,
		"[a]\n${KEY}=1\n":                      2,
		"[a]\ndescription=x\x1b[2J\n":          2,
		"[a]\ndescription=caf\xc3\xa9\n":       2,
		"[a]\n=1\n":                            2,
		"[a b/c]\nrw=read\n":                   1,
		"[]\nrw=read\n":                        1,
		"[a]\nbs=" + strings.Repeat("1", 5000): 2,
	} {
		_, err := ParseJobFile(in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: err = %v, want a SyntaxError", in, err)
			continue
		}
		if se.Line != line {
			t.Errorf("%q: line %d, want %d (%v)", in, se.Line, line, err)
		}
	}
	if _, err := ParseJobFile("[a]\n" + strings.Repeat("; padding\n", MaxJobFileBytes/10+1)); err == nil {
		t.Error("a job file over the size limit was read")
	}
}

// Log rows fio never writes (NaN, infinities, negatives) are errors
// naming the line, not samples.
func FuzzScanLog(f *testing.F) {
	for _, s := range []string{
		"1000, 10245, 0, 0, 0\n1000, 4407, 1, 0, 0\n",
		"2001, 11998, 0, 4096, 0x0000\n",
		"1000, NaN, 0, 0, 0\n", "1000, Inf, 1, 0, 0\n", "1000, -1, 0, 0\n", "-5, 1, 0, 0\n",
		"1000, 1e400, 0, 0\n", "99999999999999999999, 1, 0, 0\n", "1000, 1, 0, -4096\n",
		"1000,1,0\n", ",,,,\n", "1000, 5, 2, 4096, 0, 1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		_ = ScanLog(strings.NewReader(in), func(e LogEntry) error {
			if math.IsNaN(e.Value) || math.IsInf(e.Value, 0) || e.Value < 0 || e.TimeMs < 0 || e.BS < 0 || e.Dir < 0 || e.Dir > 2 {
				t.Fatalf("entry %+v from %q", e, in)
			}
			return nil
		})
	})
}

func TestScanLogRefusesNonFinite(t *testing.T) {
	for _, bad := range []string{"1000, NaN, 0, 0\n", "1000, +Inf, 0, 0\n", "1000, -3, 0, 0\n", "-1, 3, 0, 0\n", "1000, 1e400, 0, 0\n"} {
		err := ScanLog(strings.NewReader("1000, 1, 0, 0\n"+bad), func(LogEntry) error { return nil })
		if err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%q: err = %v, want an error on line 2", bad, err)
		}
	}
}

// Whatever ParseJobFile accepts has no include, no expansion and no
// control characters, and every option sits in a section.
func FuzzParseJobFile(f *testing.F) {
	for _, s := range []string{
		"[global]\nioengine=libaio\n[a]\nrw=read\n",
		"[a]\ninclude x\n", "[a]\ninclude\tx\n", "[a]\ninclude=x\n", "[a]\nsize=${X}\n", "[a]\nsize=8*$mb_memory\n",
		"[a]\nexec_prerun=id;x\n", "[a]\nfilename=/a:/b # c\n", "[global9]\nrw=write\n[b]\n", "[a]\r\nrw=read\r\n",
		"x=1\n[a]\n", "[a\n", "[a]]\n", "[a]\n\x00=1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		secs, err := ParseJobFile(in)
		if err != nil {
			return
		}
		for _, s := range secs {
			for _, kv := range s.Options {
				line := kv.Key + "=" + kv.Value
				if strings.ContainsAny(line, "$;#\r\n") || strings.HasPrefix(kv.Key, "include") || kv.Key == "" {
					t.Fatalf("accepted %q from %q", line, in)
				}
				for _, c := range []byte(line) {
					if c < 0x20 && c != '\t' || c >= 0x7f {
						t.Fatalf("accepted byte %#x from %q", c, in)
					}
				}
			}
		}
	})
}
