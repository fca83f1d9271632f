package main

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// fleet serves the node exporter series of vols volumes, five a node,
// scraped every minute from start for days days. Each counter is
// computed in closed form at the last scrape at or before an instant.
type fleet struct {
	vols, days int
}

func (f fleet) inst(v int) string { return fmt.Sprintf("node-%03d:9100", v/5) }
func (f fleet) dev(v int) string  { return "sd" + string(rune('b'+v%5)) }

// rate is a volume's IOPS outside its busy half hour: from 10 to 2,900
// (every fifth volume idle at 1).
func rate(v int) float64 {
	if v%5 == 4 {
		return 1
	}
	return 10 + float64(v*37%290)*10
}

// busyAt is where in the day the volume's busy half hour starts.
func busyAt(v int) float64 { return float64(v*613%1380) * 60 }

// ios is the volume's completed IOs from start to t seconds: its rate,
// five times higher for 30 minutes a day.
func ios(v int, t float64) float64 {
	r := rate(v)
	day := math.Floor(t / 86400)
	in := math.Min(math.Max(math.Mod(t, 86400)-busyAt(v), 0), 1800)
	return r*t + 4*r*(day*1800+in)
}

// value is a metric's value for volume v at t seconds after start.
func value(metric string, v int, t float64) float64 {
	n := ios(v, t)
	switch metric {
	case "node_disk_reads_completed_total":
		return math.Round(n * 0.7)
	case "node_disk_writes_completed_total":
		return math.Round(n * 0.3)
	case "node_disk_read_bytes_total":
		return math.Round(n*0.7) * 4096
	case "node_disk_written_bytes_total":
		return math.Round(n*0.3) * 16384
	case "node_disk_read_time_seconds_total":
		return math.Round(n*0.7) * 0.0005
	case "node_disk_write_time_seconds_total":
		return math.Round(n*0.3) * 0.001
	case "node_disk_io_time_seconds_total":
		return math.Min(t, n*0.0002)
	}
	return 0
}

func (f fleet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	end := float64(f.days * 86400)
	num := func(k string) float64 { x, _ := strconv.ParseFloat(r.Form.Get(k), 64); return x }
	w.Header().Set("Content-Type", "application/json")
	var b strings.Builder
	labels := func(v int) string {
		return fmt.Sprintf(`{"instance":%q,"device":%q,"job":"node"}`, f.inst(v), f.dev(v))
	}
	rel := func(abs float64) float64 { return abs - float64(start.Unix()) }
	lastScrape := func(t float64) float64 { return math.Floor(t/scrape) * scrape }
	switch r.URL.Path {
	case "/api/v1/series":
		b.WriteString(`{"status":"success","data":[`)
		for v := 0; v < f.vols; v++ {
			if v > 0 {
				b.WriteByte(',')
			}
			b.WriteString(labels(v))
		}
		b.WriteString("]}")
	case "/api/v1/query":
		// The raw samples of the last 5 minutes (the scrape interval).
		t := math.Min(rel(num("time")), end)
		b.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[`)
		for v := 0; v < f.vols; v++ {
			if v > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"metric":` + labels(v) + `,"values":[`)
			for k := 4; k >= 0; k-- {
				s := lastScrape(t) - float64(k*scrape)
				fmt.Fprintf(&b, `[%s,"%s"]`, strconv.FormatFloat(s+float64(start.Unix()), 'f', -1, 64), strconv.FormatFloat(value("node_disk_io_time_seconds_total", v, s), 'f', -1, 64))
				if k > 0 {
					b.WriteByte(',')
				}
			}
			b.WriteString("]}")
		}
		b.WriteString("]}}")
	case "/api/v1/query_range":
		q := r.Form.Get("query")
		ts := strings.HasPrefix(q, "timestamp(")
		var metrics []string
		for _, term := range strings.Split(strings.TrimPrefix(q, "timestamp("), " + ") {
			if i := strings.IndexByte(term, '{'); i >= 0 {
				term = term[:i]
			}
			metrics = append(metrics, term)
		}
		from, to, step := rel(num("start")), rel(num("end")), num("step")
		b.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[`)
		for v := 0; v < f.vols; v++ {
			if v > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"metric":` + labels(v) + `,"values":[`)
			first := true
			for t := from; t <= to+1e-9; t += step {
				if t < 0 || t > end+scrape {
					continue
				}
				s := lastScrape(math.Min(t, end))
				x := 0.0
				for _, m := range metrics {
					x += value(m, v, s)
				}
				if ts {
					x = s + float64(start.Unix())
				}
				if !first {
					b.WriteByte(',')
				}
				first = false
				fmt.Fprintf(&b, `[%s,"%s"]`, strconv.FormatFloat(t+float64(start.Unix()), 'f', -1, 64), strconv.FormatFloat(x, 'f', -1, 64))
			}
			b.WriteString("]}")
		}
		b.WriteString("]}}")
	default:
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write([]byte(b.String()))
}
