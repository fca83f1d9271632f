package etcdmetrics

import (
	"bytes"
	"os"
	"testing"
)

// BenchmarkParseEtcdPage: the cost of one scrape's parse of a real etcd
// page (146 KiB), which watch --etcd pays every interval per member.
func BenchmarkParseEtcdPage(b *testing.B) {
	page, err := os.ReadFile("testdata/etcd-3.4.23.metrics")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(page)); err != nil {
			b.Fatal(err)
		}
	}
}
