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
	return walk(reflect.ValueOf(v).Elem(), "")
}

func walk(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		return quantityOf(path, units.FigureAny).Check(path, v.Float())
	case reflect.Int, reflect.Int64, reflect.Int32:
		return quantityOf(path, wholeFigure).Check(path, float64(v.Int()))
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		return quantityOf(path, wholeFigure).Check(path, float64(v.Uint()))
	case reflect.String:
		if s := v.String(); termtext.HasBreak(s) && !multiLine[leaf(path)] && v.CanSet() {
			v.SetString(termtext.Unbroken(s))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return walk(v.Elem(), path)
		}
	case reflect.Struct:
		t := v.Type()
		if t == reflect.TypeFor[Histogram]() {
			h := v.Addr().Interface().(*Histogram)
			return units.CountFigure.Check(path+".count", float64(h.Count()))
		}
		for i := 0; i < v.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			switch {
			case name == "-":
				continue
			case f.Anonymous && name == "":
				if err := walk(v.Field(i), path); err != nil {
					return err
				}
				continue
			case name == "":
				name = f.Name
			}
			if f.Type == reflect.TypeFor[[]byte]() || f.Type.Name() == "RawMessage" {
				continue
			}
			if err := walk(v.Field(i), join(path, name)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if err := walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		return walkMap(v, path)
	}
	return nil
}

// walkMap checks a map's figures (evidence), by their names, and keeps
// its keys and text values (labels) to one line.
func walkMap(v reflect.Value, path string) error {
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
		q, ok := figureOf[k]
		if !ok {
			q = units.FigureAny
		}
		if err := q.Check(fmt.Sprintf("%s[%s]", path, termtext.Line(k)), it.Value().Float()); err != nil {
			return err
		}
	}
	return nil
}

// wholeFigure is an integer of no known quantity (an index, a count of
// jobs, fio's group): never negative.
var wholeFigure = units.Quantity{Name: "a whole number of no sign", Max: units.FigureAny.Max}

// quantityOf is the quantity of the figure at path, def when its name is
// not known.
func quantityOf(path string, def units.Quantity) units.Quantity {
	if q, ok := figureOf[leaf(path)]; ok {
		return q
	}
	return def
}

// leaf is the last name of a path: "read.lat.p99_ns" is "p99_ns",
// "devices[0].samples[3].util_pct" is "util_pct".
func leaf(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		path = path[i+1:]
	}
	if i := strings.IndexByte(path, '['); i >= 0 {
		path = path[:i]
	}
	return path
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
