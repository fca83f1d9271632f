package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/diagnosis"
)

// Anything at all given to report, analyze or compare either reads as
// results that the analysis and every renderer can handle, or is refused
// with an error: never a panic, and never memory sized from a number in
// the input.
// lineBreakToken is FORGED after a line break as JSON escapes one.
var lineBreakToken = regexp.MustCompile(`\\([nrfv]|u(000[abcd]|0085|2028|2029))FORGED`)

// badFigure is a figure printed that no measurement gives: NaN, an
// infinity, a wrapped integer, a number of absurd length.
var badFigure = regexp.MustCompile(`NaN|[+-]Inf|-9,223,372|[0-9,]{28}`)

func FuzzDecode(f *testing.F) {
	for _, glob := range []string{"testdata/*.json", "../fio/testdata/*.json", "../result/testdata/*", "../fio/testdata/*.txt"} {
		files, _ := filepath.Glob(glob)
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil && len(b) < 256<<10 {
				f.Add(b)
			}
		}
	}
	f.Add([]byte(`{"schema":"iolens.result/v2","status":"ok","test":{"name":"t","runtime_s":1e300},"fio_series":[{"t_s":1e15,"read_iops":1}],"read":{"iops":1,"runtime_ms":1000000000000000}}`))
	f.Add([]byte(`{"schema":"iolens.result/v2","status":"ok","test":{"name":"t","group":"qd-sweep:x","iodepth":-5,"numjobs":-1},"read":{"iops":-1,"lat":{"mean_ns":-3}}}`))
	f.Add([]byte(`{"schema":"iolens.watch/v1","type":"sample","t_s":1e300,"devices":[{"device":"d"}]}`))
	f.Add([]byte("{\n  \"schema\": \"iolens.diagnosis/v1\",\n  \"verdict\": [],\n  \"results\": [{\"schema\":\"iolens.result/v3\",\"status\":\"ok\",\"test\":{\"name\":\"t\"},\"trim\":{\"iops\":1},\"fio\":{\"jobs\":2,\"hosts\":[\"a\",\"b\"],\"parts\":[{\"job\":\"t\",\"host\":\"a\",\"jobs\":3,\"mixed\":{\"iops\":1}}]}}]\n}\n"))
	f.Add([]byte("{\n  \"schema\": \"iolens.comparison/v1\"\n}\n"))
	// Line breaks in every text a record carries, each before a token
	// that must never start a line of a report (issue 34.6).
	if b, err := os.ReadFile("../result/testdata/v1.ndjson"); err == nil {
		line := string(bytes.SplitN(b, []byte("\n"), 2)[0])
		for _, r := range []*strings.Replacer{
			strings.NewReplacer(`"run_id":"`, `"run_id":"r\nFORGED `, `"suite":"`, `"suite":"s\rFORGED `, `"summary":"`, `"summary":"x\u2028FORGED `),
			strings.NewReplacer(`"name":"`, `"name":"n\nFORGED `, `"labels":{"`, `"labels":{"k\nFORGED":"v\nFORGED `, `"path":"`, `"path":"p\u0085FORGED `),
			strings.NewReplacer(`"device":"`, `"device":"d\nFORGED `, `"hostname":"`, `"hostname":"h\fFORGED `, `"status":"ok"`, `"status":"failed","error":"e\nFORGED "`),
			strings.NewReplacer(`"iops":12048.475762`, `"iops":1e308`),
			strings.NewReplacer(`"iops":12048.475762`, `"iops":-1`),
		} {
			f.Add([]byte(r.Replace(line)))
		}
	}
	// One line, as jq -c leaves them: a diagnosis, and fio's own output.
	f.Add([]byte(`{"schema":"iolens.diagnosis/v1","verdict":[],"results":[{"schema":"iolens.result/v3","status":"ok","test":{"name":"t"},"read":{"iops":1}}]}`))
	f.Add([]byte(`{"fio version":"fio-3.33","jobs":[{"jobname":"j","groupid":0,"error":0,"job options":{"rw":"write","iodepth":"-8"},"iodepth_level":{"8":100},"write":{"io_bytes":4096,"io_kbytes":nan,"bw_bytes":4096,"iops":nan,"runtime":1000,"total_ios":1,"lat_ns":{"min":1,"max":2,"mean":1,"N":1}}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := ReadResults(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		analysis.Annotate(rs)
		// FORGED only ever after a line break of the input's: then no
		// line of a report may start with it.
		forging := bytes.Contains(b, []byte("FORGED")) && !bytes.Contains(lineBreakToken.ReplaceAll(b, nil), []byte("FORGED"))
		for _, format := range formats {
			r, _ := RendererFor(format)
			var out bytes.Buffer
			_ = r(&out, diagnosis.Replay(rs))
			if format != "text" && format != "md" {
				continue
			}
			for _, l := range strings.Split(out.String(), "\n") {
				if s := strings.TrimLeft(l, " -*#|>"); forging && strings.HasPrefix(s, "FORGED") {
					t.Fatalf("%s: a line forged by the input: %q", format, l)
				}
				if m := badFigure.FindString(l); m != "" {
					t.Fatalf("%s: a figure no measurement gives, %q, in %q", format, m, l)
				}
			}
		}
	})
}
