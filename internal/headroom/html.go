package headroom

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/units"
)

// chart is one band over time drawn as SVG: the highest per-step share
// of the cap in each slot, the mean under it, and the 95% and 100%
// lines.
type chart struct {
	Title    string
	Sub      string
	Max      string // polyline points
	Mean     string
	Y95      float64
	Y100     float64
	Top      string
	From, To string
}

const chartW, chartH = 720.0, 120.0

func newChart(title, sub string, band []BandPoint, from, to time.Time, loc *time.Location) chart {
	c := chart{Title: title, Sub: sub, From: at(from, loc), To: at(to, loc)}
	top := 110.0
	for _, p := range band {
		top = max(top, p.MaxPct*1.05)
	}
	c.Top = units.Share(top / 100)
	y := func(pct float64) float64 { return chartH - min(pct, top)/top*chartH }
	x := func(t time.Time) float64 {
		return float64(t.Sub(from)) / float64(max(to.Sub(from), 1)) * chartW
	}
	var mx, mn strings.Builder
	for _, p := range band {
		fmt.Fprintf(&mx, "%.1f,%.1f ", x(p.T), y(p.MaxPct))
		fmt.Fprintf(&mn, "%.1f,%.1f ", x(p.T), y(p.MeanPct))
	}
	c.Max, c.Mean = mx.String(), mn.String()
	c.Y95, c.Y100 = y(AtCapPct), y(100)
	return c
}

type htmlPage struct {
	Header, Verdict string
	Lines           []string
	Volumes         []chart
	Nodes           []chart
	NodeLines       []string
	Notes           []string
}

var pageTmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>iolens: volume headroom</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:1100px;color:#222}
h1{font-size:1.4em} h2{font-size:1.15em;margin-top:1.5em} .v{background:#fff4e0;padding:.6em;border-left:4px solid #e8a33d}
pre{white-space:pre-wrap;font-size:12px} svg{background:#fafafa;border:1px solid #ddd} .c{margin:1em 0}
.mx{fill:none;stroke:#c0392b;stroke-width:1} .mn{fill:none;stroke:#2e86c1;stroke-width:1} .l95{stroke:#e67e22;stroke-dasharray:4 3} .l100{stroke:#555}
</style></head><body>
<h1>Volume headroom</h1>
<p>{{.Header}}</p>
<p class="v"><b>Verdict:</b> {{.Verdict}}</p>
<pre>{{range .Lines}}{{.}}
{{end}}</pre>
<h2>Each volume: share of its cap in force over time</h2>
<p>Red: the highest step in each slot; blue: the mean. Dashed: 95% (at the cap); grey: 100%.</p>
{{range .Volumes}}<div class="c"><b>{{.Title}}</b> {{.Sub}}<br>
<svg width="720" height="120" viewBox="0 0 720 120" role="img" aria-label="{{.Title}}">
<line class="l100" x1="0" x2="720" y1="{{.Y100}}" y2="{{.Y100}}"/><line class="l95" x1="0" x2="720" y1="{{.Y95}}" y2="{{.Y95}}"/>
<polyline class="mn" points="{{.Mean}}"/><polyline class="mx" points="{{.Max}}"/></svg>
<br><small>{{.From}} to {{.To}}; top {{.Top}}</small></div>
{{end}}
<h2>Nodes: the sum of their volumes against the VM's caps</h2>
<pre>{{range .NodeLines}}{{.}}
{{end}}</pre>
{{range .Nodes}}<div class="c"><b>{{.Title}}</b> {{.Sub}}<br>
<svg width="720" height="120" viewBox="0 0 720 120" role="img" aria-label="{{.Title}}">
<line class="l100" x1="0" x2="720" y1="{{.Y100}}" y2="{{.Y100}}"/><line class="l95" x1="0" x2="720" y1="{{.Y95}}" y2="{{.Y95}}"/>
<polyline class="mn" points="{{.Mean}}"/><polyline class="mx" points="{{.Max}}"/></svg>
<br><small>{{.From}} to {{.To}}; top {{.Top}}</small></div>
{{end}}
{{if .Notes}}<h2>Notes</h2><ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
</body></html>
`))

// HTML is one self-contained page: the verdict and lines, each volume's
// band of its share of the cap over time, and the node sums.
func HTML(w io.Writer, r *Report, loc *time.Location) error {
	p := htmlPage{Header: r.header(loc), Verdict: r.Verdict, Notes: r.Notes}
	for _, v := range r.Volumes {
		p.Lines = append(p.Lines, v.Line(loc))
		if len(v.Band) > 0 {
			p.Volumes = append(p.Volumes, newChart(v.name(), v.Status+"; "+v.Why, v.Band, r.From, r.To, loc))
		}
	}
	for _, n := range r.Nodes {
		p.NodeLines = append(p.NodeLines, n.line())
		if len(n.Band) > 0 {
			p.Nodes = append(p.Nodes, newChart(n.Instance, n.VM, n.Band, r.From, r.To, loc))
		}
	}
	return pageTmpl.Execute(w, p)
}
