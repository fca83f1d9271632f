package result

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/scaletest"
)

// manyRecords is n records of testdata/v1.ndjson's first result (series,
// histogram and all) as this iolens writes them, each its own test.
func manyRecords(t testing.TB, n int) []byte {
	b, err := os.ReadFile("testdata/v1.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewDecoder(bytes.NewReader(b), "v1", Formats{}).Decode()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	enc := NewEncoder(&out)
	for i := range n {
		r.Index, r.Test.Name = i+1, fmt.Sprintf("test-%d", i)
		if err := enc.Encode(&r); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

func decodeAll(t testing.TB, in []byte, want int) {
	rs, err := NewDecoder(bytes.NewReader(in), "many", Formats{}).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != want {
		t.Fatalf("%d results, want %d", len(rs), want)
	}
}

// TestDecoderLinear: 10 times the records take about 10 times the work,
// as NDJSON and as a JSON array.
func TestDecoderLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("reads inputs of thousands of items several times to compare the work (seconds on a busy machine); skipped under -short")
	}
	const n = 100
	nd := map[int][]byte{n: manyRecords(t, n), 10 * n: manyRecords(t, 10*n)}
	scaletest.Linear(t, "NDJSON", n, func(n int) { decodeAll(t, nd[n], n) })
	arr := map[int][]byte{}
	for k, b := range nd {
		arr[k] = append(append([]byte("["), bytes.ReplaceAll(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"), []byte(",\n"))...), ']')
	}
	scaletest.Linear(t, "JSON array", n, func(n int) { decodeAll(t, arr[n], n) })
}

// TestTooManyResults: a stream of more results than the decoder may
// return stops with a TooManyError (with a hint) after exactly that many,
// by default at MaxResults.
func TestTooManyResults(t *testing.T) {
	d := NewDecoder(bytes.NewReader(manyRecords(t, 6)), "six", Formats{})
	d.MaxResults = 5
	var got int
	var err error
	for {
		if _, err = d.Decode(); err != nil {
			break
		}
		got++
	}
	var tm *TooManyError
	if !errors.As(err, &tm) || got != 5 || hint.Of(err) == "" {
		t.Errorf("6 records, at most 5: %d read, then %v", got, err)
	}
	if _, err := d.Decode(); err != io.EOF {
		t.Errorf("after the refusal: %v, want io.EOF", err)
	}
	if testing.Short() {
		return
	}
	line := []byte(`{"schema":"iolens.result/v3","run_id":"r","suite":"s","test":{"name":"t"},"status":"ok"}` + "\n")
	in := bytes.Repeat(line, MaxResults+1)
	if _, err := NewDecoder(bytes.NewReader(in), "many", Formats{}).ReadAll(); !errors.As(err, &tm) || tm.Max != MaxResults {
		t.Errorf("%d records: %v, want a TooManyError at %d", MaxResults+1, err, MaxResults)
	}
}

// BenchmarkDecode reads 8 records (a run of the quick suite), and 10,
// 100 and 1,000 times as many.
func BenchmarkDecode(b *testing.B) {
	scaletest.Bench(b, 8, "record", func(n int) func() {
		in := manyRecords(b, n)
		return func() { decodeAll(b, in, n) }
	})
}
