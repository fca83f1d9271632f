package headroom

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/iolens/iolens/internal/units"
)

// Page is a report as report.Headrooms writes it, its instants in Loc.
type Page struct {
	R   *Report
	Loc *time.Location
}

// WriteFormat writes the report in one of report.Headrooms' formats.
func (p Page) WriteFormat(w io.Writer, format string) error {
	loc := p.Loc
	if loc == nil {
		loc = time.UTC
	}
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(p.R)
	case "csv":
		return CSV(w, p.R)
	case "md":
		return Markdown(w, p.R, loc)
	case "html":
		return HTML(w, p.R, loc)
	}
	return Text(w, p.R, loc)
}

// MaxLine is the longest line of the text report.
const MaxLine = 159

func clipTo(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 1 {
		return string(r[:n])
	}
	return string(r[:n-1]) + "…"
}

// wrap breaks s at spaces into lines of at most n characters, the
// later ones indented.
func wrap(s string, n int, indent string) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > n:
			out = append(out, clipTo(line, n))
			line = indent + w
		default:
			line += " " + w
		}
	}
	if line != "" {
		out = append(out, clipTo(line, n))
	}
	return out
}

func (r *Report) header(loc *time.Location) string {
	step := "step " + units.FormatSeconds(r.StepS)
	if r.StepS == r.ScrapeIntervalS {
		step += " (the scrape interval)"
	} else {
		step += " (scrape interval " + units.FormatSeconds(r.ScrapeIntervalS) + ")"
	}
	return fmt.Sprintf("%s {%s}, %s to %s, %s", r.Prometheus, r.Selector, full(r.From, loc), full(r.To, loc), step)
}

func full(t time.Time, loc *time.Location) string { return t.In(loc).Format("2006-01-02 15:04 MST") }

func at(t time.Time, loc *time.Location) string { return t.In(loc).Format("Jan 02 15:04") }

// name is how a volume is named: its claim, else instance and device.
func (v *Volume) name() string {
	switch {
	case v.Claim != "" && v.OSDiskOf != "":
		return v.Claim + " (" + v.Device + ", the OS disk of " + v.OSDiskOf + ")"
	case v.Claim != "":
		return v.Claim + " (" + v.Device + ")"
	case v.OSDiskOf != "":
		return "OS disk of " + v.OSDiskOf + " (" + v.Device + ")"
	}
	inst := v.Instance
	if inst == "" {
		inst = "any node"
	}
	return inst + " " + v.Device
}

// use is the volume's use in a few words.
func (v *Volume) use() string {
	if v.Intervals == 0 {
		return ""
	}
	if v.CapPct != nil {
		return fmt.Sprintf("p99 %s max %s of cap", units.Share(v.CapPct.P99/100), units.Share(v.CapPct.Max/100))
	}
	return fmt.Sprintf("p99 %s %s", units.FormatIOPS(v.IOPS.P99), units.MBps(v.BWBytes.P99))
}

// money is the recommendation in a few words.
func (v *Volume) money() string {
	r := v.Rec
	if r == nil || r.Action == ActionNone {
		return ""
	}
	s := r.Action
	if r.Proposed != "" && r.Action != ActionKeep {
		s += " " + r.Proposed
	}
	switch {
	case r.Current == "":
	case r.CurrentUSD == nil:
		s += ", price unknown"
	case r.DeltaUSD != nil && r.Action != ActionKeep:
		s += fmt.Sprintf(" %s→%s (%s/mo)", units.USD(*r.CurrentUSD), units.USD(*r.ProposedUSD), units.SignedUSD(*r.DeltaUSD))
	default:
		s += " " + units.USD(*r.CurrentUSD) + "/mo"
	}
	return s
}

// Line is the volume's line of the text report, at most MaxLine long.
func (v *Volume) Line(loc *time.Location) string {
	capName := "cap unknown"
	if v.Cap != nil {
		capName = v.Cap.Name
	}
	parts := []string{fmt.Sprintf("%-11s", v.Status), clipTo(v.name(), 40), clipTo(capName, 26)}
	if u := v.use(); u != "" {
		parts = append(parts, u)
	}
	if v.AtCapS > 0 {
		parts = append(parts, "at cap "+units.FormatSeconds(v.AtCapS))
	}
	if v.CreditMinPct != nil && *v.CreditMinPct < 100 {
		parts = append(parts, fmt.Sprintf("credit low %s %s", units.Share(*v.CreditMinPct/100), at(v.CreditMinAt, loc)))
	}
	if v.VMBoundS > 0 {
		parts = append(parts, "VM bound "+units.FormatSeconds(v.VMBoundS))
	}
	if p := v.Provider; p != nil {
		word := "agrees"
		if !p.Agrees {
			word = "DISAGREES"
		}
		parts = append(parts, fmt.Sprintf("EBS: %s over limit, %s over VM (%s)", units.FormatSeconds(math.Max(p.ExceededIOPSS, p.ExceededTPS)),
			units.FormatSeconds(math.Max(p.EC2ExceededIOPSS, p.EC2ExceededTPS)), word))
	}
	if m := v.money(); m != "" {
		parts = append(parts, m)
	}
	if g := len(v.Gaps) + v.GapsDropped; g > 0 && v.Intervals > 0 {
		var missing time.Duration
		for _, gp := range v.Gaps {
			missing += gp.To.Sub(gp.From)
		}
		word := "gaps"
		if g == 1 {
			word = "gap"
		}
		parts = append(parts, fmt.Sprintf("%d %s (%s without samples)", g, word, units.FormatDuration(missing)))
	}
	if v.Status == StatusNoData || v.Status == StatusUnknown {
		parts = append(parts, v.Why)
	}
	return clipTo(strings.Join(parts, "  "), MaxLine)
}

// nodeLine is a node's sum against its VM.
func (n *Node) line() string {
	s := n.Instance
	if n.VM != "" {
		s += " (" + n.VM + ")"
	}
	s += fmt.Sprintf(": %d devices, sum p99 %s %s, max %s %s", len(n.Devices), units.FormatIOPS(n.IOPS.P99), units.MBps(n.BWBytes.P99), units.FormatIOPS(n.IOPS.Max), units.MBps(n.BWBytes.Max))
	switch {
	case n.VMUnknown != "":
		s += "; VM caps unknown: " + n.VMUnknown
	case n.AtCapS > 0:
		s += fmt.Sprintf("; %s bound %s (caps %s, %s)", n.Binds, units.FormatSeconds(n.AtCapS), units.FormatIOPS(n.VMIOPS), units.MBps(n.VMBWBytes))
	case n.CapPct != nil:
		s += fmt.Sprintf("; p99 %s of the VM's caps (%s, %s)", units.Share(n.CapPct.P99/100), units.FormatIOPS(n.VMIOPS), units.MBps(n.VMBWBytes))
	}
	return clipTo(s, MaxLine)
}

// Text is the report for a terminal: the verdict, a line per volume
// worst first, the nodes, the notes.
func Text(w io.Writer, r *Report, loc *time.Location) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", clipTo(r.header(loc), MaxLine))
	for _, l := range wrap("verdict: "+r.Verdict, MaxLine, "  ") {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n")
	for _, v := range r.Volumes {
		b.WriteString(v.Line(loc) + "\n")
	}
	if len(r.Nodes) > 0 {
		b.WriteString("\nnodes (the sum of their devices against the VM's caps):\n")
		for _, n := range r.Nodes {
			b.WriteString("  " + n.line() + "\n")
		}
	}
	if t := r.Totals; t.CurrentUSD > 0 || t.PriceUnknown > 0 {
		fmt.Fprintf(&b, "\nmonthly list prices: %s now, %s proposed (%s)", units.USD(t.CurrentUSD), units.USD(t.ProposedUSD), units.SignedUSD(t.DeltaUSD))
		if t.PriceUnknown > 0 {
			fmt.Fprintf(&b, "; %d volumes with an unknown price are not counted", t.PriceUnknown)
		}
		b.WriteString("\n")
		for _, n := range t.ByNamespace {
			fmt.Fprintf(&b, "  %s: %s now, %s proposed (%s)\n", n.Namespace, units.USD(n.CurrentUSD), units.USD(n.ProposedUSD), units.SignedUSD(n.DeltaUSD))
		}
	}
	for _, n := range r.Notes {
		b.WriteString("note: " + n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// csvSafe keeps a cell a spreadsheet would read as a formula as text.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func optNum(p *float64) string {
	if p == nil {
		return ""
	}
	return units.Exact(*p)
}

// CSVHeader is the CSV column list; units are in the names, and an
// empty cell is unknown (never 0).
var CSVHeader = []string{"instance", "device", "claim", "status", "cap", "cap_source", "cap_iops", "cap_bw_bytes", "burst_iops", "burst_bw_bytes",
	"iops_p50", "iops_p99", "iops_max", "bw_bytes_p50", "bw_bytes_p99", "bw_bytes_max", "await_ms_p50", "await_ms_p99",
	"cap_pct_p99", "cap_pct_max", "at_cap_s", "credit_min_pct", "credit_min_at", "vm_bound_s", "covered_s", "gaps",
	"provider_exceeded_s", "provider_ec2_exceeded_s", "provider_agrees",
	"action", "current", "current_usd_month", "proposed", "proposed_usd_month", "delta_usd_month", "why"}

// CSV is a row per volume, worst first.
func CSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, v := range r.Volumes {
		row := []string{csvSafe(v.Instance), csvSafe(v.Device), csvSafe(v.Claim), v.Status}
		if c := v.Cap; c != nil {
			row = append(row, csvSafe(c.Name), c.Source, units.Exact(c.IOPS), units.Exact(c.BWBytes), units.Exact(c.BurstIOPS), units.Exact(c.BurstBWBytes))
		} else {
			row = append(row, "", "", "", "", "", "")
		}
		if v.Intervals > 0 {
			row = append(row, units.Exact(v.IOPS.P50), units.Exact(v.IOPS.P99), units.Exact(v.IOPS.Max), units.Exact(v.BWBytes.P50), units.Exact(v.BWBytes.P99), units.Exact(v.BWBytes.Max), units.Exact(v.AwaitMs.P50), units.Exact(v.AwaitMs.P99))
		} else {
			row = append(row, "", "", "", "", "", "", "", "")
		}
		if v.CapPct != nil {
			row = append(row, units.Exact(v.CapPct.P99), units.Exact(v.CapPct.Max), units.Exact(v.AtCapS))
		} else {
			row = append(row, "", "", "")
		}
		if v.CreditMinPct != nil {
			row = append(row, units.Exact(*v.CreditMinPct), v.CreditMinAt.UTC().Format(time.RFC3339))
		} else {
			row = append(row, "", "")
		}
		row = append(row, units.Exact(v.VMBoundS), units.Exact(v.CoveredS), fmt.Sprint(len(v.Gaps)+v.GapsDropped))
		if p := v.Provider; p != nil {
			row = append(row, units.Exact(math.Max(p.ExceededIOPSS, p.ExceededTPS)), units.Exact(math.Max(p.EC2ExceededIOPSS, p.EC2ExceededTPS)), fmt.Sprint(p.Agrees))
		} else {
			row = append(row, "", "", "")
		}
		if rc := v.Rec; rc != nil {
			row = append(row, rc.Action, csvSafe(rc.Current), optNum(rc.CurrentUSD), csvSafe(rc.Proposed), optNum(rc.ProposedUSD), optNum(rc.DeltaUSD))
		} else {
			row = append(row, "", "", "", "", "", "")
		}
		row = append(row, csvSafe(v.Why))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// mdCell keeps a cell in its column.
func mdCell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ", "\r", " ").Replace(s)
}

// Markdown is the report for a document.
func Markdown(w io.Writer, r *Report, loc *time.Location) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Volume headroom\n\n%s\n\n**Verdict:** %s\n\n", mdCell(r.header(loc)), mdCell(r.Verdict))
	b.WriteString("| status | volume | cap | p99 / max of cap | at cap | lowest credit | recommendation |\n|---|---|---|---|---|---|---|\n")
	for _, v := range r.Volumes {
		capName, use, credit := "unknown", v.Why, ""
		if v.Cap != nil {
			capName = v.Cap.Name + " (" + v.Cap.Source + ")"
		}
		if v.CapPct != nil {
			use = units.Share(v.CapPct.P99/100) + " / " + units.Share(v.CapPct.Max/100)
		}
		if v.CreditMinPct != nil {
			credit = units.Share(*v.CreditMinPct/100) + " at " + at(v.CreditMinAt, loc)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", v.Status, mdCell(v.name()), mdCell(capName), mdCell(use),
			units.FormatSeconds(v.AtCapS), credit, mdCell(v.money()))
	}
	if len(r.Nodes) > 0 {
		b.WriteString("\n## Nodes\n\n")
		for _, n := range r.Nodes {
			b.WriteString("- " + mdCell(n.line()) + "\n")
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range r.Notes {
			b.WriteString("- " + mdCell(n) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
