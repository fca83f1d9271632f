package report

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/compare"
	"github.com/iolens/iolens/internal/diagnosis"
)

// historyFake writes the format it was asked for, as promhist.Report does
// its analysis.
type historyFake struct{}

func (historyFake) WriteFormat(w io.Writer, format string) error {
	_, err := io.WriteString(w, "history as "+format+"\n")
	return err
}

// Every format of every registry writes its report, and no name (or
// other name) is taken twice within a registry.
func TestRegistriesWrite(t *testing.T) {
	rs := fixed(t)
	d := diagnosis.Saved(rs)
	c := compare.Comparison{Schema: "iolens.comparison/v1", Operands: []string{"a"}, Labels: []string{"a"}, Alpha: 0.05}
	nodes := compare.NodeDiagnoses{Schema: "iolens.k8s-diagnosis/v1", Nodes: map[string]diagnosis.Diagnosis{"node-1": d}}
	form := func(w io.Writer) error { _, err := io.WriteString(w, "a form\n"); return err }
	listing := Listing{Value: []string{"a"}, Forms: map[string]func(io.Writer) error{"text": form, "table": form, "wide": form, "csv": form,
		"auto": form, "tty": form, "ndjson": form}}
	in := Input{Outcome: given(rs, d), Comparison: &c, Nodes: &nodes, History: historyFake{}, Headroom: historyFake{}, Listing: listing}
	if len(Registries()) != 11 {
		t.Fatalf("%d registries", len(Registries()))
	}
	for _, reg := range Registries() {
		seen := map[string]bool{}
		for _, f := range reg.Formats {
			for _, n := range append([]string{f.Name}, f.Aliases...) {
				if seen[n] {
					t.Errorf("%s: %q twice", reg.Kind, n)
				}
				seen[n] = true
			}
			if f.Write == nil {
				t.Errorf("%s: %s writes nothing", reg.Kind, f.Name)
				continue
			}
			var buf bytes.Buffer
			if err := f.Write(&buf, in); err != nil || buf.Len() == 0 {
				t.Errorf("%s -o %s: %v, %d bytes", reg.Kind, f.Name, err, buf.Len())
			}
		}
		if !seen["text"] || !seen["json"] {
			t.Errorf("%s lacks text or json: %v", reg.Kind, reg.Names())
		}
		if _, err := reg.Lookup("no-such-format"); err == nil {
			t.Errorf("%s accepts a format it lacks", reg.Kind)
		}
	}
}

// The reports people read (text, Markdown; HTML has its own test) open
// with the diagnosis: its verdict comes before any test's figures. The
// data formats (JSON, NDJSON, CSV) carry the records, and diagnose's JSON
// the diagnosis beside them.
func TestHumanReportsOpenWithTheDiagnosis(t *testing.T) {
	rs := fixed(t)
	d := diagnosis.Saved(rs)
	if len(d.Verdict) == 0 {
		t.Fatal("no verdict to look for")
	}
	for _, reg := range []Registry{Results, Diagnoses} {
		for _, name := range []string{"text", "md"} {
			f, err := reg.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := f.Write(&buf, Input{Outcome: diagnosis.Replay(rs)}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			// Its first line: a text report breaks a long one to fit a
			// terminal.
			v := strings.Index(out, termLines(d.Verdict[0], termWidth)[0])
			first := len(out)
			for _, r := range rs {
				if i := strings.Index(out, r.Test.Name); i >= 0 && i < first {
					first = i
				}
			}
			if v < 0 || v > first {
				t.Errorf("%s -o %s: the verdict %q is at %d, the first test at %d:\n%s", reg.Kind, name, d.Verdict[0], v, first, out)
			}
		}
	}
}
