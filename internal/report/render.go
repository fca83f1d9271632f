package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/termtext"
	"github.com/iolens/iolens/internal/units"
)

// formats lists the formats of a results report (Results' names).
var formats = Results.Names()

// Renderer writes an outcome's results, with their diagnoses, in one
// format.
type Renderer func(w io.Writer, out diagnosis.Outcome) error

// JSON writes the results as one indented array.
func JSON(w io.Writer, rs []result.Result) error {
	var buf bytes.Buffer
	buf.WriteString("[")
	for i := range rs {
		b, err := result.Marshal(&rs[i])
		if err != nil {
			return err
		}
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n  ")
		if err := json.Indent(&buf, b, "  ", "  "); err != nil {
			return err
		}
	}
	if len(rs) > 0 {
		buf.WriteString("\n")
	}
	buf.WriteString("]\n")
	_, err := w.Write(buf.Bytes())
	return err
}

// row is one direction of one result, as the tables show it. part names
// a sub-row: one host, or one job, of a result that sums several.
type row struct {
	r    *result.Result
	dir  string
	d    *result.DirResult
	part string
}

func rows(rs []result.Result) []row {
	var out []row
	for i := range rs {
		r := &rs[i]
		n := 0
		for name, d := range r.Dirs() {
			out = append(out, row{r: r, dir: name, d: d})
			n++
		}
		if n == 0 {
			out = append(out, row{r: r, dir: "-"})
		}
	}
	return out
}

// maxJobRows is the most per-job sub-rows a table shows under a result;
// beyond it the per-job figures are in the JSON output only.
const maxJobRows = 8

// partRows are the sub-rows of a result that sums several fio jobs or
// hosts: one per host when several ran it, else one per job (up to
// maxJobRows).
func partRows(r *result.Result) []row {
	if r.Fio == nil || len(r.Fio.Parts) == 0 {
		return nil
	}
	var picked []*result.Part
	var labels []string
	if hs := r.Fio.Hosts; len(hs) > 1 {
		for _, h := range hs {
			var mine []*result.Part
			var total *result.Part
			for i := range r.Fio.Parts {
				p := &r.Fio.Parts[i]
				if p.Host == h && p.Jobs > 1 {
					total = p
				} else if p.Host == h {
					mine = append(mine, p)
				}
			}
			switch {
			case total != nil:
				picked, labels = append(picked, total), append(labels, fmt.Sprintf("host %s (%d jobs)", h, total.Jobs))
			case len(mine) == 1:
				picked, labels = append(picked, mine[0]), append(labels, "host "+h)
			}
		}
	} else if len(r.Fio.Parts) <= maxJobRows {
		for i := range r.Fio.Parts {
			picked, labels = append(picked, &r.Fio.Parts[i]), append(labels, fmt.Sprintf("job %d", i+1))
		}
	}
	var out []row
	for i, p := range picked {
		for _, name := range result.DirNames {
			if d := p.Dir(name); d != nil {
				out = append(out, row{r: r, dir: name, d: d, part: labels[i]})
			}
		}
	}
	return out
}

// tableRows are the rows of a table: each result's directions, then its
// parts' sub-rows.
func tableRows(rs []result.Result) []row {
	var out []row
	for i := range rs {
		out = append(out, rows(rs[i:i+1])...)
		out = append(out, partRows(&rs[i])...)
	}
	return out
}

// rowLabel names a row: the test (and repeat), or a sub-row's part.
func rowLabel(x row, repeats bool) string {
	if x.part != "" {
		return "  " + x.part
	}
	return testLabel(x.r, repeats)
}

// maxCell is the most characters a name takes in a text table's cell: a
// table pads every row to its widest name, so one huge name read back
// would pad every row to its size. The data formats keep it whole.
const maxCell = 80

// cell is s as one cell of a text table: one line, no tabs (termtext.Line),
// at most maxCell characters, an ellipsis ending one clipped.
func cell(s string) string {
	s = termtext.Line(s)
	if utf8.RuneCountInString(s) <= maxCell {
		return s
	}
	r := []rune(s)
	return string(r[:maxCell-1]) + "…"
}

// testLabel names a result's row: the test, and the repeat when there are
// several.
func testLabel(r *result.Result, repeats bool) string {
	if repeats {
		return fmt.Sprintf("%s #%d", r.Test.Name, r.Repeat)
	}
	return r.Test.Name
}

func hasRepeats(rs []result.Result) bool {
	for _, r := range rs {
		if r.Repeat > 1 {
			return true
		}
	}
	return false
}

// text writes the text report of out, each run and target opening with
// its diagnosis.
func text(w io.Writer, out diagnosis.Outcome, verbose bool) error {
	rs := out.Results
	if len(rs) == 0 {
		_, err := fmt.Fprintln(w, "no results")
		return err
	}
	rep := hasRepeats(rs)
	groups := groupByTarget(rs)
	for gi, g := range groups {
		if gi > 0 {
			fmt.Fprintln(w)
		}
		writeHeader(w, g[0])
		if isWatch(g) {
			if err := watchText(w, g); err != nil {
				return err
			}
			continue
		}
		d := diagnosisOf(&out, g)
		writeVerdict(w, &d)
		if fl := stories(g, &d); len(fl) > 0 {
			fmt.Fprintln(w, "\nFindings (worst first; --verbose lists them per test)")
			for _, f := range fl {
				fmt.Fprintf(w, "  %s%s: %s\n", sevTag(f.Severity), f.Test, f.Summary)
			}
		}
		if verbose {
			writeVerbose(w, g, &d)
		}
		fmt.Fprintln(w)
		// Each name one line without tabs, and clipped (cell): a tab in a
		// name read back would move every figure after it to another column.
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "test\tdir\tIOPS\tMB/s\tlat mean\tp50\tp99\tp99.9\tmax\t")
		for _, x := range tableRows(g) {
			if x.d == nil {
				fmt.Fprintf(tw, "%s\t-\t%s\t\t\t\t\t\t\t\n", cell(rowLabel(x, rep)), termtext.Line(strings.ToUpper(x.r.Status)))
				continue
			}
			mb := units.MB(x.d.BWBytes)
			if x.dir == "sync" {
				mb = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", cell(rowLabel(x, rep)), x.dir, units.Whole(x.d.IOPS), mb,
				units.Millis(x.d.Lat.MeanNs), units.PercentileMillis(x.d.Lat.P50Ns), units.PercentileMillis(x.d.Lat.P99Ns), units.PercentileMillis(x.d.Lat.P999Ns), units.Millis(x.d.Lat.MaxNs))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w, "latencies in ms (submission to completion; fdatasync time for sync); MB/s = 10^6 bytes/s; percentiles from fio's histograms")
		writeClipped(w, g, rep)
		for _, x := range rows(g) {
			if x.d != nil && x.d.LatKind == "clat" {
				fmt.Fprintln(w, "some rows show completion latency (clat) only: fio recorded no total-latency percentiles (run it with lat_percentiles=1)")
				break
			}
		}
		writeFailures(w, g)
		writeNotes(w, g)
		if err := writeRepeatsText(w, g); err != nil {
			return err
		}
	}
	return nil
}

// writeVerdict writes d's verdict, what to change and what it did not
// establish, as the text reports open with them.
func writeVerdict(w io.Writer, d *diagnosis.Diagnosis) {
	fmt.Fprintln(w, "Verdict")
	for _, l := range d.Verdict {
		for _, t := range termLines(l, termWidth) {
			fmt.Fprintf(w, "  %s\n", t)
		}
	}
	if len(d.ToChange) > 0 {
		fmt.Fprintln(w, "\nTo change")
		for _, a := range d.ToChange {
			for _, t := range termLines(a, termWidth) {
				fmt.Fprintf(w, "  %s\n", t)
			}
		}
	}
	if len(d.Unknown) > 0 {
		fmt.Fprintln(w, "\nNot established")
		for _, u := range d.Unknown {
			fmt.Fprintf(w, "  %s\n", u)
		}
	}
}

// writeClipped names the rows whose histogram put a percentile above the
// largest latency measured: those figures are held at the max.
func writeClipped(w io.Writer, rs []result.Result, rep bool) {
	var names []string
	for _, x := range rows(rs) {
		if x.d != nil && x.d.Clipped() {
			names = appendOnce(names, testLabel(x.r, rep)+" "+x.dir)
		}
	}
	if len(names) > 0 {
		fmt.Fprintf(w, "percentiles held at the max in %s: fio's histogram buckets (1/64 of their value wide) put them above the slowest IO\n",
			strings.Join(names, ", "))
	}
}

// sevTag marks a finding that needs a look; info goes untagged.
func sevTag(sev string) string {
	switch sev {
	case "fail":
		return "FAIL "
	case "warn":
		return "WARN "
	}
	return ""
}

// writeVerbose lists every finding of every test, with its details and
// evidence, and each curve in full.
func writeVerbose(w io.Writer, rs []result.Result, d *diagnosis.Diagnosis) {
	if len(d.Curves) > 0 {
		fmt.Fprintln(w, "\nDisk model, per curve")
		for _, c := range d.Curves {
			fmt.Fprintf(w, "  %s (on %s)\n", c.Summary, c.Test)
		}
	}
	fmt.Fprintln(w, "\nFindings per test")
	for _, r := range rs {
		for _, f := range r.Findings {
			if f.Kind == result.KindModel {
				continue
			}
			fmt.Fprintf(w, "  [%s] %s: %s\n", f.Severity, testLabel(&r, hasRepeats(rs)), f.Summary)
			if f.Detail != "" {
				fmt.Fprintf(w, "      %s\n", f.Detail)
			}
			if len(f.Evidence) > 0 {
				fmt.Fprintf(w, "      %s\n", evidenceText(f.Evidence))
			}
		}
	}
}

// evidenceText is a finding's evidence as sorted key=value pairs.
func evidenceText(ev map[string]float64) string {
	ks := make([]string, 0, len(ev))
	for k := range ev {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = k + "=" + strconv.FormatFloat(ev[k], 'g', 5, 64)
	}
	return strings.Join(parts, ", ")
}

// groupByTarget splits rs by run and target, as the diagnoses are built.
func groupByTarget(rs []result.Result) [][]result.Result { return diagnosis.Groups(rs) }

func writeHeader(w io.Writer, r result.Result) {
	t := r.Target
	who := "iolens " + r.Host.IolensVersion
	if r.Host.IolensVersion == "" {
		// fio's own output, read back: no iolens ran it.
		who = "read by iolens"
	}
	fmt.Fprintf(w, "%s  suite %s  run %s\n", who, r.Suite, r.RunID)
	dev := units.OrDash(t.Device)
	if len(t.Devices) > 1 {
		dev += " (" + strings.Join(t.Devices[1:], ", ") + ")"
	}
	fmt.Fprintf(w, "target  %s %s  device %s  fs %s", t.Kind, t.Path, dev, units.OrDash(t.Filesystem))
	if t.SizeBytes > 0 {
		fmt.Fprintf(w, "  file %s", units.HumanBytes(float64(t.SizeBytes)))
		if t.SizeReason != "" {
			fmt.Fprintf(w, " (%s)", t.SizeReason)
		}
	}
	if t.Emulated != "" {
		fmt.Fprintf(w, "  emulated %s", t.Emulated)
	}
	fmt.Fprintln(w)
	h := r.Host
	fmt.Fprintf(w, "host    %s  kernel %s", units.OrDash(h.Hostname), units.OrDash(h.Kernel))
	// Results read from fio's own output or a watch log do not know the
	// machine's size: say nothing rather than "0 CPUs".
	if h.CPUs > 0 {
		fmt.Fprintf(w, "  %d CPUs", h.CPUs)
	}
	if h.MemTotalBytes > 0 {
		fmt.Fprintf(w, "  %s RAM", units.HumanBytes(float64(h.MemTotalBytes)))
	}
	if r.FioVersion != "" {
		fmt.Fprintf(w, "  %s", r.FioVersion)
	}
	fmt.Fprintln(w)
	if len(t.Labels) > 0 {
		fmt.Fprintf(w, "labels  %s\n", formatLabels(t.Labels))
	}
	fmt.Fprintln(w)
}

func formatLabels(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, " ")
}

func writeFailures(w io.Writer, rs []result.Result) {
	first := true
	for _, r := range rs {
		if r.Status == "ok" {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nFailed")
			first = false
		}
		fmt.Fprintf(w, "  %s: %s\n", r.Test.Name, r.Error)
	}
}

// runNote says a note is about the run, not the test it travels on:
// what a plan could not establish, which every report lists under "Not
// established", and the mark of an interrupted run, which the header
// and the status carry.
func runNote(n string) bool {
	return strings.HasPrefix(n, result.NoteNotEstablished) || n == result.NoteInterrupted
}

func writeNotes(w io.Writer, rs []result.Result) {
	seen := map[string][]string{}
	var order []string
	for _, r := range rs {
		for _, n := range r.Notes {
			if runNote(n) {
				continue
			}
			if _, ok := seen[n]; !ok {
				order = append(order, n)
			}
			seen[n] = appendOnce(seen[n], r.Test.Name)
		}
	}
	if len(order) == 0 {
		return
	}
	fmt.Fprintln(w, "\nNotes")
	for _, n := range order {
		fmt.Fprintf(w, "  %s: %s\n", strings.Join(seen[n], ", "), n)
	}
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// csvHeader is the CSV column list; units are in the names.
var csvHeader = []string{"run_id", "suite", "test", "repeat", "status", "target", "device", "dir", "rw", "bs_bytes",
	"iodepth", "numjobs", "iops", "bw_bytes_per_s", "lat_mean_ns", "lat_p50_ns", "lat_p90_ns", "lat_p99_ns",
	"lat_p99_9_ns", "lat_p99_99_ns", "lat_max_ns", "lat_kind"}

// csvText is a text cell as a spreadsheet may safely open it: a cell that
// starts with =, +, -, @, a tab or a carriage return would be read as a
// formula (=HYPERLINK(...) in a run id or label), so it is prefixed with
// a single quote, as OWASP's CSV injection guidance says. Numbers are
// written by iolens and never pass here.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// CSV writes one row per test and direction.
func CSV(w io.Writer, rs []result.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, x := range rows(rs) {
		r := x.r
		c := csvText
		rec := []string{c(r.RunID), c(r.Suite), c(r.Test.Name), strconv.Itoa(r.Repeat), c(r.Status), c(r.Target.Path), c(r.Target.Device), x.dir,
			c(r.Test.RW), strconv.FormatInt(r.Test.BlockSize, 10), strconv.Itoa(r.Test.IODepth), strconv.Itoa(r.Test.NumJobs)}
		if x.d != nil {
			l := x.d.Lat
			rec = append(rec, f(x.d.IOPS), f(x.d.BWBytes), f(l.MeanNs), f(l.P50Ns), f(l.P90Ns), f(l.P99Ns), f(l.P999Ns), f(l.P9999Ns), f(l.MaxNs), c(x.d.LatKind))
		} else {
			rec = append(rec, make([]string, 10)...)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// markdown writes the report as GitHub-flavoured markdown tables.
func markdown(w io.Writer, out diagnosis.Outcome) error {
	rs := out.Results
	rep := hasRepeats(rs)
	groups := groupByTarget(rs)
	for gi, g := range groups {
		if gi > 0 {
			fmt.Fprintln(w)
		}
		r := g[0]
		fmt.Fprintf(w, "## %s on %s\n\n", mdEscape(r.Suite), mdEscape(r.Target.Path))
		fmt.Fprintf(w, "- device: %s, file system: %s\n- host: %s, kernel %s, %s\n- run: %s\n\n",
			mdEscape(units.OrDash(r.Target.Device)), mdEscape(units.OrDash(r.Target.Filesystem)), mdEscape(units.OrDash(r.Host.Hostname)),
			mdEscape(units.OrDash(r.Host.Kernel)), mdEscape(units.OrDash(r.FioVersion)), mdEscape(r.RunID))
		if isWatch(g) {
			fmt.Fprintf(w, "### Watch\n\n")
			for i := range g {
				for _, l := range watchVerdict(&g[i]) {
					fmt.Fprintf(w, "- %s\n", mdEscape(l))
				}
			}
			if fl := stories(g, &diagnosis.Diagnosis{}); len(fl) > 0 {
				fmt.Fprintf(w, "\n### Findings\n\n")
				for _, f := range fl {
					fmt.Fprintf(w, "- **%s** %s\n", f.Severity, mdEscape(f.Summary))
				}
			}
			continue
		}
		d := diagnosisOf(&out, g)
		fmt.Fprintf(w, "### Verdict\n\n")
		for _, l := range d.Verdict {
			fmt.Fprintf(w, "- %s\n", mdEscape(l))
		}
		for _, u := range d.Unknown {
			fmt.Fprintf(w, "- not established: %s\n", mdEscape(u))
		}
		if len(d.ToChange) > 0 {
			fmt.Fprintf(w, "\n### To change\n\n")
			for _, a := range d.ToChange {
				fmt.Fprintf(w, "- %s\n", mdEscape(a))
			}
		}
		if fl := stories(g, &d); len(fl) > 0 {
			fmt.Fprintf(w, "\n### Findings\n\n")
			for _, f := range fl {
				fmt.Fprintf(w, "- **%s** %s: %s\n", f.Severity, mdEscape(f.Test), mdEscape(f.Summary))
			}
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| test | dir | IOPS | MB/s | mean ms | p50 ms | p99 ms | p99.9 ms | max ms |")
		fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|")
		for _, x := range tableRows(g) {
			if x.d == nil {
				fmt.Fprintf(w, "| %s | - | %s | | | | | | |\n", mdEscape(rowLabel(x, rep)), strings.ToUpper(x.r.Status))
				continue
			}
			mb := units.MB(x.d.BWBytes)
			if x.dir == "sync" {
				mb = "-"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdEscape(rowLabel(x, rep)), x.dir, units.Whole(x.d.IOPS), mb,
				units.Millis(x.d.Lat.MeanNs), units.PercentileMillis(x.d.Lat.P50Ns), units.PercentileMillis(x.d.Lat.P99Ns), units.PercentileMillis(x.d.Lat.P999Ns), units.Millis(x.d.Lat.MaxNs))
		}
		writeRepeatsMD(w, g)
	}
	return nil
}

func mdEscape(s string) string {
	r := strings.NewReplacer("|", "\\|", "\n", " ", "<", "&lt;", ">", "&gt;", "*", "\\*", "_", "\\_", "`", "\\`")
	return r.Replace(s)
}
