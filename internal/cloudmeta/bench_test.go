package cloudmeta

import (
	"context"
	"net"
	"testing"
)

// BenchmarkDetect times a whole Detect: against a fake Azure IMDS (all
// four probes race, Azure wins, its document is read and mapped, devices
// tied through a fixture tree) and against a closed port (no cloud).
func BenchmarkDetect(b *testing.B) {
	b.Run("azure", func(b *testing.B) {
		s := serve(b, &fake{provider: azure})
		o := testOptions(b, s.URL, fixture(b, nil, nil))
		for i := 0; i < b.N; i++ {
			if info, err := detect(context.Background(), o); err != nil || info.Provider != azure {
				b.Fatal(err, info.Probes)
			}
		}
	})
	b.Run("no-cloud", func(b *testing.B) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		addr := "http://" + l.Addr().String()
		l.Close()
		o := testOptions(b, addr, fixture(b, nil, nil))
		for i := 0; i < b.N; i++ {
			if info, err := detect(context.Background(), o); err != nil || info.Detected() {
				b.Fatal(err, info.Probes)
			}
		}
	})
}
