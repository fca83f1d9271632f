package store

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// FuzzDecodeRecord: a stored record is a gzip blob in a database anyone
// may hand over. Any blob (as it is, or gzipped) decodes without
// panicking and never takes more than the budget left.
func FuzzDecodeRecord(f *testing.F) {
	good, _ := encodeRecord(&result.Result{Schema: result.Schema, RunID: "r", Test: result.TestSpec{Name: "t"}})
	f.Add(good, false)
	f.Add([]byte(`{"schema":"iolens.result/v2","run_id":"r"}`), true)
	f.Add([]byte(`{"schema":"iolens.result/v9"}`), true)
	f.Add(bytes.Repeat([]byte(" "), 4096), true)
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, false)
	f.Fuzz(func(t *testing.T, b []byte, zip bool) {
		if zip {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(b)
			zw.Close()
			b = buf.Bytes()
		}
		const budget = 1 << 20
		left := int64(budget)
		r, err := decodeRecord(b, &left)
		if left < 0 || left > budget {
			t.Fatalf("budget left %d", left)
		}
		if err != nil {
			return
		}
		if _, err := result.Marshal(&r); err != nil {
			t.Fatalf("a decoded record does not encode again: %v", err)
		}
	})
}
