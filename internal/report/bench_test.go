package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/diagnosis"
)

// BenchmarkAnalyze64Jobs is iolens analyze (read, analyse, print) on a
// fio output of 64 jobs: fio 3.6's shape, made of the four jobs of
// testdata's numjobs file sixteen times over. It runs as fio wrote such
// a file (numjobs=64 without group_reporting), and with each job made a
// test of its own (its own name and group), so that analyze has 64
// results to relate. With IOLENS_FIO_CORPUS set (see docs/fio-compat.md)
// it runs on the corpus's real 64-job file as well. json-bytes is the
// size of report -o json for the same input.
func BenchmarkAnalyze64Jobs(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("..", "fio", "testdata", "fio-3.6_numjobs4.json"))
	if err != nil {
		b.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		b.Fatal(err)
	}
	four := doc["jobs"].([]any)
	var jobs []any
	for len(jobs) < 64 {
		for _, j := range four {
			c, err := json.Marshal(j)
			if err != nil {
				b.Fatal(err)
			}
			var x map[string]any
			if err := json.Unmarshal(c, &x); err != nil {
				b.Fatal(err)
			}
			x["job options"].(map[string]any)["numjobs"] = "64"
			jobs = append(jobs, x)
		}
	}
	doc["jobs"] = jobs
	clones, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	inputs := []benchInput{{"numjobs=64", clones}, {"64 tests", ownTests(b, clones)}}
	if dir := os.Getenv("IOLENS_FIO_CORPUS"); dir != "" {
		file, err := os.ReadFile(filepath.Join(dir, "louwrentius-testdata250ssdcrucial-randread-1-64.json"))
		if err != nil {
			b.Fatal(err)
		}
		inputs = append(inputs, benchInput{"corpus numjobs=64", file}, benchInput{"corpus 64 tests", ownTests(b, file)})
	}
	for _, c := range inputs {
		b.Run(c.name, func(b *testing.B) {
			var out countWriter
			for i := 0; i < b.N; i++ {
				rs, err := ReadResults(bytes.NewReader(c.in), "64jobs.json")
				if err != nil {
					b.Fatal(err)
				}
				analysis.Annotate(rs)
				if err := perTestText(io.Discard, diagnosis.Outcome{Results: rs}); err != nil {
					b.Fatal(err)
				}
				if i == 0 {
					if err := JSON(&out, rs); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(out), "json-bytes")
		})
	}
}

type benchInput struct {
	name string
	in   []byte
}

// ownTests gives each job entry of a fio document its own name and
// group: tests that ran one after the other.
func ownTests(b *testing.B, raw []byte) []byte {
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		b.Fatal(err)
	}
	for i, j := range doc["jobs"].([]any) {
		j.(map[string]any)["jobname"] = fmt.Sprintf("job%02d", i)
		j.(map[string]any)["groupid"] = float64(i)
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	return out
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
