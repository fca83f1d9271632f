package promhist

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/termtext"
	"github.com/iolens/iolens/internal/units"
)

// Report is an analysis as report.Histories writes it, its instants in
// Loc.
type Report struct {
	A   *Analysis
	Loc *time.Location
}

// WriteFormat writes the report in one of report.Histories' formats.
func (r Report) WriteFormat(w io.Writer, format string) error {
	switch format {
	case "json":
		return JSON(w, r.A)
	case "md":
		return Markdown(w, r.A, r.Loc)
	case "html":
		return HTML(w, r.A, r.Loc)
	}
	return Text(w, r.A, r.Loc)
}

func (a *Analysis) header(c Clock) string {
	step := fmt.Sprintf("step %s", units.FormatDuration(time.Duration(a.StepS*float64(time.Second))))
	if a.StepS == a.ScrapeIntervalS {
		step += " (the scrape interval)"
	} else {
		step += fmt.Sprintf(" (scrape interval %s)", units.FormatDuration(time.Duration(a.ScrapeIntervalS*float64(time.Second))))
	}
	h := fmt.Sprintf("%s {%s}, %s to %s, %s", a.Prometheus, a.Selector, c.Full(a.From), c.Full(a.To), step)
	if a.Expect != "" {
		h += ", compared with " + a.Expect
	}
	return h
}

func (n *Node) header(c Clock) string {
	s := fmt.Sprintf("%s: %s", n.Instance, strings.Join(n.Devices, ", "))
	if n.Intervals > 0 {
		s += fmt.Sprintf("; %d intervals, %s", n.Intervals, c.Span(n.First, n.Last))
	} else {
		s += "; no interval with samples at both ends"
	}
	return s
}

// Text is the verdict for a terminal.
func Text(w io.Writer, a *Analysis, loc *time.Location) error {
	c := NewClock(a, loc)
	// Labels and notes come from Prometheus's answers: each prints on
	// its own line, never starting another.
	fmt.Fprintln(w, termtext.Line(a.header(c)))
	for _, n := range a.Notes {
		fmt.Fprintf(w, "note: %s\n", termtext.Line(n))
	}
	for _, n := range a.Nodes {
		fmt.Fprintf(w, "\n%s\n", termtext.Line(n.header(c)))
		ls := c.Verdict(n)
		if len(ls) == 0 {
			fmt.Fprintf(w, "  %s\n", Nothing)
		}
		for _, l := range ls {
			fmt.Fprintf(w, "  [%s] %s\n", l.Severity, termtext.Line(l.Text))
		}
	}
	return nil
}

// JSON is the analysis as one JSON document (schema iolens.prometheus/v1).
func JSON(w io.Writer, a *Analysis) error {
	if a.Notes == nil {
		a.Notes = []string{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(a)
}

func mdEscape(s string) string {
	s = termtext.Line(s)
	r := strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`)
	return r.Replace(s)
}

// Markdown is the verdict for a post-mortem document.
func Markdown(w io.Writer, a *Analysis, loc *time.Location) error {
	c := NewClock(a, loc)
	fmt.Fprintf(w, "## Disk history from Prometheus\n\n%s\n", mdEscape(a.header(c)))
	if len(a.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range a.Notes {
			fmt.Fprintf(w, "- note: %s\n", mdEscape(n))
		}
	}
	for _, n := range a.Nodes {
		fmt.Fprintf(w, "\n### %s\n\n", mdEscape(n.header(c)))
		ls := c.Verdict(n)
		if len(ls) == 0 {
			fmt.Fprintf(w, "- %s\n", Nothing)
		}
		for _, l := range ls {
			fmt.Fprintf(w, "- **%s** %s\n", l.Severity, mdEscape(l.Text))
		}
	}
	return nil
}

// HTML is the report page: the verdict first, then each device's series
// with its findings shaded.
func HTML(w io.Writer, a *Analysis, loc *time.Location) error {
	c := NewClock(a, loc)
	p := report.Page{Title: "iolens: disk history from Prometheus", WarningTitle: "Verdict", Generated: a.To}
	p.Warnings = append(p.Warnings, a.header(c))
	rs := a.Results(loc)
	for _, n := range a.Nodes {
		t := &report.Table{Title: n.header(c), Header: []string{"severity", "device", "what"}}
		ls := c.Verdict(n)
		if len(ls) == 0 {
			t.Rows = append(t.Rows, []string{"info", "", Nothing})
		}
		for _, l := range ls {
			t.Rows = append(t.Rows, []string{l.Severity, l.Device, l.Text})
		}
		p.Tables = append(p.Tables, t)
		var set []result.Result
		for _, r := range rs {
			if r.Target.Path == n.Instance {
				set = append(set, r)
			}
		}
		if len(set) > 0 {
			d := diagnosis.Saved(set)
			p.Sets = append(p.Sets, report.Set{Name: n.Instance, Results: set, Diagnosis: &d})
		}
	}
	p.Warnings = append(p.Warnings, a.Notes...)
	return report.WriteHTML(w, p)
}
