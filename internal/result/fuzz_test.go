package result

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/units"
)

// FuzzDecoder: anything read either gives records whose every figure is
// within its quantity, or an error; never a panic. A figure past what
// its integer field holds is refused naming the field, like any figure
// out of its range, not passed over.
func FuzzDecoder(f *testing.F) {
	files, _ := filepath.Glob("testdata/*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 256<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"schema":"iolens.result/v3","status":"ok","test":{"name":"t"},"read":{"iops":1,"io_bytes":1e19}}`))
	f.Add([]byte(`{"schema":"iolens.result/v3","status":"ok","test":{"name":"t","iodepth":-1e300},"read":{"iops":1,"lat":{"n":-1}}}`))
	f.Add([]byte(`[{"schema":"iolens.result/v3","status":"ok","test":{"name":"t"},"write":{"iops":1,"total_ios":18446744073709551616}}]`))
	f.Add([]byte(`{"schema":"iolens.watch/v1","type":"sample","t_s":1,"devices":[{"device":"d","in_flight":1e19}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := NewDecoder(strings.NewReader(string(b)), "fuzz", Formats{}).ReadAll()
		if err != nil {
			var fe *units.FigureError
			if errors.As(err, &fe) && fe.Field == "" {
				t.Fatalf("a figure refused without its field: %v", err)
			}
			return
		}
		for i := range rs {
			if err := checkRecord(&rs[i]); err != nil {
				t.Fatalf("record %d read with a figure out of range: %v", i, err)
			}
		}
	})
}
