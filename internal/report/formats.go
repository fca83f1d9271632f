package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/iolens/iolens/internal/compare"
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/result"
)

// Input is what a format writes: the outcome of a run or of saved
// results replayed (the results and the diagnosis of each run and target,
// built once before any report), and what a command computed beside them.
type Input struct {
	diagnosis.Outcome
	// Verbose adds every test's findings to text.
	Verbose bool
	// PerTest is analyze's text: after each diagnosis, every test's
	// figures and findings in place of the stories and the table.
	PerTest bool
	// Comparison and Operands are compare's (Comparisons).
	Comparison *compare.Comparison
	Operands   []compare.Operand
	// Nodes are k8s diagnose's (NodeReports).
	Nodes *compare.NodeDiagnoses
	// History is analyze --prometheus's (Histories).
	History History
	// Headroom is headroom's (Headrooms).
	Headroom History
	// Listing is what a command lists or shows (Listings, Tables,
	// LimitSheets, Watches, EventLogs).
	Listing Listing
}

// History is a disk history read back from Prometheus (analyze
// --prometheus). It is analysed above this package, so it writes each
// format of Histories itself.
type History interface {
	WriteFormat(w io.Writer, format string) error
}

// historyFormat is the Histories format name.
func historyFormat(name string) func(io.Writer, Input) error {
	return func(w io.Writer, in Input) error { return in.History.WriteFormat(w, name) }
}

// headroomFormat is the Headrooms format name.
func headroomFormat(name string) func(io.Writer, Input) error {
	return func(w io.Writer, in Input) error { return in.Headroom.WriteFormat(w, name) }
}

// Format is one output format: its name (and the other names -o accepts
// for it), how it writes, and what its output passes through on its way
// to a stream (Escape, PlainOut when nil; To applies it).
type Format struct {
	Name    string
	Aliases []string
	Write   func(io.Writer, Input) error
	Escape  Escaping
}

// Registry is the formats of one kind of report, in the order help text
// lists them.
type Registry struct {
	// Kind names the report ("results", "diagnosis", ...).
	Kind    string
	Formats []Format
}

// Names lists the formats' names.
func (r Registry) Names() []string {
	var out []string
	for _, f := range r.Formats {
		out = append(out, f.Name)
	}
	return out
}

// Lookup finds a format by its name or another name of it; "" is text.
func (r Registry) Lookup(name string) (Format, error) {
	if name == "" {
		name = "text"
	}
	for _, f := range r.Formats {
		if f.Name == name || slices.Contains(f.Aliases, name) {
			return f, nil
		}
	}
	return Format{}, &UnknownFormatError{Format: name, Valid: r.Names()}
}

// UnknownFormatError names an output format that does not exist.
type UnknownFormatError struct {
	Format string
	Valid  []string
}

func (e *UnknownFormatError) Error() string {
	want := e.Valid
	if n := len(want); n > 1 {
		want = append(append([]string(nil), want[:n-2]...), want[n-2]+" or "+want[n-1])
	}
	return fmt.Sprintf("unknown output format %q: want %s", e.Format, strings.Join(want, ", "))
}

// Hint lists the valid formats.
func (e *UnknownFormatError) Hint() string {
	return "valid formats: " + strings.Join(e.Valid, ", ")
}

// diagnosisOf is the diagnosis the outcome holds of g, one run and
// target's results (empty when it holds none: reports draw what they are
// given and build nothing).
func diagnosisOf(out *diagnosis.Outcome, g []result.Result) diagnosis.Diagnosis {
	if d := out.For(g); d != nil {
		return *d
	}
	return diagnosis.Diagnosis{}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// The registries: every format of every report iolens writes. The
// command line's -o flags, their help, shell completion and every command
// that writes a report read them.
var (
	// Results are the reports of a set of results: report, run,
	// analyze, history show, k8s run.
	Results = Registry{Kind: "results", Formats: []Format{
		{Name: "text", Escape: textOut, Write: func(w io.Writer, in Input) error {
			if in.PerTest {
				return perTestText(w, in.Outcome)
			}
			return text(w, in.Outcome, in.Verbose)
		}},
		{Name: "json", Escape: dataOut, Write: func(w io.Writer, in Input) error { return JSON(w, in.Results) }},
		{Name: "ndjson", Escape: dataOut, Write: func(w io.Writer, in Input) error { return NDJSON(w, in.Results) }},
		{Name: "csv", Write: func(w io.Writer, in Input) error { return CSV(w, in.Results) }},
		{Name: "md", Aliases: []string{"markdown"}, Write: func(w io.Writer, in Input) error { return markdown(w, in.Outcome) }},
		{Name: "html", Escape: pageOut, Write: func(w io.Writer, in Input) error { return HTML(w, in.Outcome) }},
	}}
	// Diagnoses are diagnose's reports: the diagnosis first, then the
	// results it was built from.
	Diagnoses = Registry{Kind: "diagnosis", Formats: []Format{
		{Name: "text", Escape: textOut, Write: func(w io.Writer, in Input) error { return text(w, in.Outcome, in.Verbose) }},
		{Name: "json", Escape: dataOut, Write: func(w io.Writer, in Input) error {
			d := diagnosisOf(&in.Outcome, in.Results)
			d.Results = in.Results
			return writeJSON(w, d)
		}},
		{Name: "md", Aliases: []string{"markdown"}, Write: func(w io.Writer, in Input) error { return markdown(w, in.Outcome) }},
		{Name: "html", Escape: pageOut, Write: func(w io.Writer, in Input) error { return HTML(w, in.Outcome) }},
	}}
	// Comparisons are compare's reports of its Comparison.
	Comparisons = Registry{Kind: "comparison", Formats: []Format{
		{Name: "text", Escape: textOut, Write: func(w io.Writer, in Input) error { return CompareText(w, *in.Comparison) }},
		{Name: "json", Escape: dataOut, Write: func(w io.Writer, in Input) error { return writeJSON(w, *in.Comparison) }},
		{Name: "csv", Write: func(w io.Writer, in Input) error { return compareCSV(w, *in.Comparison) }},
		{Name: "md", Aliases: []string{"markdown"}, Write: func(w io.Writer, in Input) error { return CompareMarkdown(w, *in.Comparison) }},
		{Name: "html", Escape: pageOut, Write: func(w io.Writer, in Input) error { return WriteHTML(w, ComparePage(in.Operands, *in.Comparison)) }},
	}}
	// Histories are analyze --prometheus's reports of a disk history.
	Histories = Registry{Kind: "history", Formats: []Format{
		{Name: "text", Escape: textOut, Write: historyFormat("text")},
		{Name: "json", Escape: dataOut, Write: historyFormat("json")},
		{Name: "md", Aliases: []string{"markdown"}, Write: historyFormat("md")},
		{Name: "html", Escape: pageOut, Write: historyFormat("html")},
	}}
	// Headrooms are headroom's reports of every volume against its caps.
	Headrooms = Registry{Kind: "headroom", Formats: []Format{
		{Name: "text", Escape: textOut, Write: headroomFormat("text")},
		{Name: "json", Escape: dataOut, Write: headroomFormat("json")},
		{Name: "csv", Write: headroomFormat("csv")},
		{Name: "md", Aliases: []string{"markdown"}, Write: headroomFormat("md")},
		{Name: "html", Escape: pageOut, Write: headroomFormat("html")},
	}}
	// NodeReports are k8s diagnose's: each node's diagnosis and the
	// comparison of the nodes.
	NodeReports = Registry{Kind: "nodes", Formats: []Format{
		{Name: "text", Escape: textOut, Write: func(w io.Writer, in Input) error { return nodesText(w, *in.Nodes) }},
		{Name: "json", Escape: dataOut, Write: func(w io.Writer, in Input) error { return writeJSON(w, *in.Nodes) }},
	}}
)

// Registries lists every registry.
func Registries() []Registry {
	return []Registry{Results, Diagnoses, Comparisons, NodeReports, Histories, Headrooms, Listings, Tables, LimitSheets, Watches, EventLogs}
}
