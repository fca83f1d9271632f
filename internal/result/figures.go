package result

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/iolens/iolens/internal/termtext"
	"github.com/iolens/iolens/internal/units"
)

// figureOf is the quantity of each figure a record or watch record holds,
// by its JSON name. A name not here is any finite figure within what a
// measurement can be (units.FigureAny); an integer is never negative.
var figureOf = map[string]units.Quantity{
	"iops": units.IOPSFigure, "r_s": units.IOPSFigure, "w_s": units.IOPSFigure,
	"read_iops": units.IOPSFigure, "write_iops": units.IOPSFigure,
	"read_ops_s": units.IOPSFigure, "write_ops_s": units.IOPSFigure,

	"bw_bytes": units.BandwidthFigure, "r_bytes_s": units.BandwidthFigure, "w_bytes_s": units.BandwidthFigure,
	"read_bw_bytes": units.BandwidthFigure, "write_bw_bytes": units.BandwidthFigure,
	"read_bytes_s": units.BandwidthFigure, "write_bytes_s": units.BandwidthFigure,

	"min_ns": units.LatencyNsFigure, "mean_ns": units.LatencyNsFigure, "max_ns": units.LatencyNsFigure,
	"p50_ns": units.LatencyNsFigure, "p90_ns": units.LatencyNsFigure, "p99_ns": units.LatencyNsFigure,
	"p99_9_ns": units.LatencyNsFigure, "p99_99_ns": units.LatencyNsFigure, "total_lat_mean_ns": units.LatencyNsFigure,
	"read_lat_mean_ns": units.LatencyNsFigure, "write_lat_mean_ns": units.LatencyNsFigure, "target_ns": units.LatencyNsFigure,

	"r_await_ms": units.LatencyMsFigure, "w_await_ms": units.LatencyMsFigure,
	"read_rtt_ms": units.LatencyMsFigure, "write_rtt_ms": units.LatencyMsFigure,
	"read_exec_ms": units.LatencyMsFigure, "write_exec_ms": units.LatencyMsFigure,
	"fsync_p99_ms": units.LatencyMsFigure, "commit_p99_ms": units.LatencyMsFigure,

	"t_s": units.TimeOffsetFigure, "start_s": units.TimeOffsetFigure,
	"duration_s": units.SecondsFigure, "runtime_s": units.SecondsFigure, "ramp_s": units.SecondsFigure,
	"sample_interval_s": units.SecondsFigure, "interval_s": units.SecondsFigure, "burst_left_s": units.SecondsFigure,
	"window_us":  {Name: "a length of time", Max: 1e15, Unit: "µs"},
	"runtime_ms": {Name: "a length of time", Max: 1e12, Unit: "ms"},

	"n": units.CountFigure, "total_ios": units.CountFigure, "retrans": units.CountFigure, "timeouts": units.CountFigure,
	"io_bytes": units.BytesFigure, "size_bytes": units.BytesFigure, "bs_bytes": units.BytesFigure,
	"rareq_bytes": units.BytesFigure, "wareq_bytes": units.BytesFigure, "dirty_bytes": units.BytesFigure,
	"writeback_bytes": units.BytesFigure, "mem_total_bytes": units.BytesFigure,

	"iodepth": units.DepthFigure, "numjobs": units.DepthFigure, "aqu_sz": units.DepthFigure,
	"backlog_avg": units.DepthFigure, "in_flight": units.DepthFigure, "depth": units.DepthFigure, "jobs": units.DepthFigure,

	"util_pct": units.PercentFigure, "iowait_pct": units.PercentFigure, "cpu_busy_pct": units.PercentFigure,
	"cpu_pct": units.PercentFigure, "usr_cpu_pct": units.PercentFigure, "sys_cpu_pct": units.PercentFigure,
	"burst_credit_pct": units.PercentFigure, "percentile": units.PercentFigure,
	"other_util_pct": units.PercentSumFigure, "ceiling_pct": units.PercentSumFigure,
	"io_pressure_pct": units.PressureFigure,
}

// multiLine are the text fields that hold what fio wrote, lines and all.
var multiLine = map[string]bool{"fio_stderr": true, "fio_job": true}

// checkRecord checks every figure of a decoded record or watch record
// against its quantity: a figure no measurement gives (NaN cannot be in
// JSON, but 1e308 and -1 can) is an error naming its field. A line break
// in its text (a run id, a name, a label, a finding), which would start
// a line of its own in every report, reads as a space; the other
// characters are kept (the terminal filter shows the ones a terminal
// obeys as '?', the data formats escape them). fio's own messages and
// job files keep their lines.
func checkRecord(v any) error {
	rv := reflect.ValueOf(v).Elem()
	// The first walk builds no names (a record holds tens of thousands
	// of figures); only a record that fails is walked again to name the
	// field. Each struct type's fields are looked at once per walk.
	w := walker{plans: map[reflect.Type][]field{}}
	if w.walk(rv, "", "") == nil {
		return nil
	}
	w.named = true
	return w.walk(rv, "", "")
}

var (
	histogramType = reflect.TypeFor[Histogram]()
	bytesType     = reflect.TypeFor[[]byte]()
)

// walker walks a record; named builds each figure's path for the error.
type walker struct {
	named bool
	plans map[reflect.Type][]field
}

// field is how a struct's field is checked.
type field struct {
	i    int
	name string // its JSON name
	kind reflect.Kind
	q    units.Quantity
	anon bool // embedded without a name: its fields are the struct's
}

// plan lists the fields of struct type t that are checked.
func (w walker) plan(t reflect.Type) []field {
	if p, ok := w.plans[t]; ok {
		return p
	}
	var p []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || f.Type == bytesType || f.Type.Name() == "RawMessage" {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		fp := field{i: i, name: name, kind: f.Type.Kind(), anon: f.Anonymous && name == ""}
		if name == "" {
			fp.name = f.Name
		}
		switch fp.kind {
		case reflect.Float32, reflect.Float64:
			fp.q = quantityOf(fp.name, units.FigureAny)
		default:
			fp.q = quantityOf(fp.name, wholeFigure)
		}
		p = append(p, fp)
	}
	w.plans[t] = p
	return p
}

// walk checks v, whose JSON name is leaf, at path (built when named).
func (w walker) walk(v reflect.Value, leaf, path string) error {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		return quantityOf(leaf, units.FigureAny).Check(path, v.Float())
	case reflect.Int, reflect.Int64, reflect.Int32:
		return quantityOf(leaf, wholeFigure).Check(path, float64(v.Int()))
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		return quantityOf(leaf, wholeFigure).Check(path, float64(v.Uint()))
	case reflect.String:
		if s := v.String(); termtext.HasBreak(s) && !multiLine[leaf] && v.CanSet() {
			v.SetString(termtext.Unbroken(s))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return w.walk(v.Elem(), leaf, path)
		}
	case reflect.Struct:
		return w.walkStruct(v, leaf, path)
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			p := ""
			if w.named {
				p = fmt.Sprintf("%s[%d]", path, i)
			}
			if err := w.walk(v.Index(i), leaf, p); err != nil {
				return err
			}
		}
	case reflect.Map:
		return w.walkMap(v, path)
	}
	return nil
}

func (w walker) walkStruct(v reflect.Value, leaf, path string) error {
	t := v.Type()
	if t == histogramType {
		h := v.Addr().Interface().(*Histogram)
		return units.CountFigure.Check(w.join(path, "count"), float64(h.Count()))
	}
	plan := w.plan(t)
	for k := range plan {
		f := &plan[k]
		fv := v.Field(f.i)
		var x float64
		switch f.kind {
		case reflect.Float32, reflect.Float64:
			x = fv.Float()
		case reflect.Int, reflect.Int64, reflect.Int32:
			x = float64(fv.Int())
		case reflect.Uint, reflect.Uint64, reflect.Uint32:
			x = float64(fv.Uint())
		case reflect.Bool:
			continue
		default:
			name, p := f.name, w.join(path, f.name)
			if f.anon {
				name, p = leaf, path
			}
			if err := w.walk(fv, name, p); err != nil {
				return err
			}
			continue
		}
		if !f.q.Known(x) {
			return f.q.Check(w.join(path, f.name), x)
		}
	}
	return nil
}

func (w walker) join(path, name string) string {
	if !w.named {
		return ""
	}
	if path == "" {
		return name
	}
	return path + "." + name
}

// walkMap checks a map's figures (evidence), by their names, and keeps
// its keys and text values (labels) to one line.
func (w walker) walkMap(v reflect.Value, path string) error {
	if v.Len() == 0 || v.Type().Key().Kind() != reflect.String {
		return nil
	}
	if v.Type().Elem().Kind() == reflect.String {
		var broken []reflect.Value
		it := v.MapRange()
		for it.Next() {
			if termtext.HasBreak(it.Key().String()) || termtext.HasBreak(it.Value().String()) {
				broken = append(broken, it.Key())
			}
		}
		for _, k := range broken {
			e := v.MapIndex(k)
			v.SetMapIndex(k, reflect.Value{})
			v.SetMapIndex(reflect.ValueOf(termtext.Unbroken(k.String())).Convert(k.Type()),
				reflect.ValueOf(termtext.Unbroken(e.String())).Convert(e.Type()))
		}
		return nil
	}
	if v.Type().Elem().Kind() != reflect.Float64 {
		return nil
	}
	it := v.MapRange()
	for it.Next() {
		k := it.Key().String()
		q := evidenceQuantity(k)
		if x := it.Value().Float(); !q.Known(x) {
			return q.Check(fmt.Sprintf("%s[%s]", path, termtext.Line(k)), x)
		}
	}
	return nil
}

// evidenceQuantity is the quantity of an evidence figure: by its name,
// or by the unit its name ends in (measured_iops, qd1_lat_ns); any
// finite figure of either sign when neither says.
func evidenceQuantity(k string) units.Quantity {
	if q, ok := figureOf[k]; ok {
		return q
	}
	switch {
	case strings.HasSuffix(k, "_iops"):
		return units.IOPSFigure
	case strings.HasSuffix(k, "_bw_bytes"):
		return units.BandwidthFigure
	case strings.HasSuffix(k, "_ns"):
		return units.LatencyNsFigure
	}
	return units.FigureAny
}

// wholeFigure is an integer of no known quantity (an index, a count of
// jobs, fio's group): never negative.
var wholeFigure = units.Quantity{Name: "a whole number of no sign", Max: units.FigureAny.Max}

// quantityOf is the quantity of the figure named leaf, def when the
// name is not known.
func quantityOf(leaf string, def units.Quantity) units.Quantity {
	if q, ok := figureOf[leaf]; ok {
		return q
	}
	return def
}
