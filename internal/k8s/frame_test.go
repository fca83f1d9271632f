package k8s

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func frames(t *testing.T, recs ...Record) []byte {
	t.Helper()
	var b bytes.Buffer
	w := NewFrameWriter(&b)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func readAll(t *testing.T, in []byte) ([]Record, *FrameReader) {
	t.Helper()
	fr := NewFrameReader(bytes.NewReader(in))
	var out []Record
	for {
		r, err := fr.Next()
		if errors.Is(err, io.EOF) {
			return out, fr
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
}

func TestFrameRoundTrip(t *testing.T) {
	in := frames(t,
		Record{Type: RecordEvent, Test: 1, Tests: 2, Name: "randread-4k"},
		Record{Type: RecordResult, Result: []byte(`{"status":"ok","note":"line\nbreak"}`)},
		Record{Type: RecordDone},
	)
	// One line per record, whatever the payload holds.
	if n := bytes.Count(in, []byte("\n")); n != 3 {
		t.Fatalf("got %d lines, want 3:\n%s", n, in)
	}
	got, fr := readAll(t, in)
	if len(got) != 3 || fr.Damaged != 0 || fr.Partial {
		t.Fatalf("got %d records, damaged %d, partial %v", len(got), fr.Damaged, fr.Partial)
	}
	for i, r := range got {
		if r.Seq != i+1 {
			t.Errorf("record %d has seq %d", i, r.Seq)
		}
	}
	if got[0].Name != "randread-4k" || got[1].Type != RecordResult || got[2].Type != RecordDone {
		t.Errorf("records out of order: %+v", got)
	}
}

// A hand-built frame checks the format independently of the writer.
func TestFrameFormat(t *testing.T) {
	body := `{"seq":1,"type":"done"}`
	// crc32 (IEEE) of body, computed outside Go: python3 -c "import zlib; print(hex(zlib.crc32(b'...')))"
	line := "IOLENS1 23 cf97a5bd " + body
	rec, ok, err := ParseFrame([]byte(line))
	if !ok {
		t.Fatal("not recognised as a frame")
	}
	if err != nil {
		// The checksum above must match; if it does not, the format changed.
		t.Fatalf("hand-built frame rejected: %v (writer gives %q)", err, AppendFrame(nil, []byte(body)))
	}
	if rec.Type != RecordDone || rec.Seq != 1 {
		t.Fatalf("got %+v", rec)
	}
}

func TestFrameInterleavedAndDamaged(t *testing.T) {
	a := frames(t, Record{Type: RecordEvent, Name: "a"}, Record{Type: RecordEvent, Name: "b"}, Record{Type: RecordDone})
	lines := strings.SplitAfter(string(a), "\n")
	var in strings.Builder
	in.WriteString("fio: some warning on stderr\n")
	// stderr text that had not ended its line when the frame was written.
	in.WriteString("partial stderr " + lines[0])
	in.WriteString("\n\n")
	// A damaged copy of the second frame: one byte of the body changed.
	bad := []byte(lines[1])
	bad[len(bad)-3] ^= 0x20
	in.Write(bad)
	// Truncated frame: the length says more than is there.
	in.WriteString(lines[1][:len(lines[1])/2] + "\n")
	in.WriteString(lines[1])
	// Trailing bytes of another writer after the body on the same line.
	in.WriteString(strings.TrimSuffix(lines[2], "\n") + "trailing-noise\n")
	got, fr := readAll(t, []byte(in.String()))
	if len(got) != 3 {
		t.Fatalf("got %d records, want 3: %+v", len(got), got)
	}
	if got[0].Name != "a" || got[1].Name != "b" || got[2].Type != RecordDone {
		t.Fatalf("wrong records: %+v", got)
	}
	if fr.Damaged != 2 {
		t.Errorf("damaged = %d, want 2", fr.Damaged)
	}
	if len(fr.Other) != 1 || fr.Other[0] != "fio: some warning on stderr" {
		t.Errorf("other lines = %q", fr.Other)
	}
}

func TestFrameTruncatedStream(t *testing.T) {
	in := frames(t, Record{Type: RecordEvent, Name: "a"}, Record{Type: RecordDone})
	for cut := 0; cut < len(in); cut++ {
		got, fr := readAll(t, in[:cut])
		first := bytes.IndexByte(in, '\n') + 1
		want := 0
		if cut >= first {
			want = 1
		}
		if len(got) != want {
			t.Fatalf("cut at %d: got %d records, want %d", cut, len(got), want)
		}
		if partial := cut != 0 && cut != first; fr.Partial != partial {
			t.Fatalf("cut at %d: partial = %v, want %v", cut, fr.Partial, partial)
		}
	}
}

func FuzzParseFrame(f *testing.F) {
	f.Add([]byte("IOLENS1 23 cf97a5bd {\"seq\":1,\"type\":\"done\"}"))
	f.Add([]byte("IOLENS1 5 00000000 {}"))
	f.Add([]byte("noise IOLENS1 999999999999 zz"))
	f.Add([]byte("IOLENS1 -1 x"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, ok, err := ParseFrame(line)
		if !ok && err != nil {
			t.Fatal("error for a non-frame")
		}
		if ok && err == nil {
			// A record that parses re-frames to a line that parses the same.
			again, ok2, err2 := ParseFrame(frames(t, rec)[:len(frames(t, rec))-1])
			if !ok2 || err2 != nil || again.Type != rec.Type {
				t.Fatalf("re-framed record does not parse: %v", err2)
			}
		}
	})
}

func FuzzFrameReader(f *testing.F) {
	f.Add([]byte("IOLENS1 23 cf97a5bd {\"seq\":1,\"type\":\"done\"}\nIOLENS1 3"), 10)
	f.Add([]byte("x\ny\n"), 1)
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		if cut < 0 || cut > len(data) {
			cut = len(data)
		}
		fr := NewFrameReader(bytes.NewReader(data[:cut]))
		for i := 0; i < len(data)+1; i++ {
			if _, err := fr.Next(); err != nil {
				return
			}
		}
		t.Fatal("reader did not end")
	})
}
