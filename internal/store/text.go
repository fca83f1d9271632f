package store

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/iolens/iolens/internal/termtext"
	"github.com/iolens/iolens/internal/units"
)

// WriteRunList is the text form of 'iolens history'.
func WriteRunList(w io.Writer, runs []Run) error {
	if len(runs) == 0 {
		_, err := fmt.Fprintln(w, "no saved runs")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED (UTC)\tSTATUS\tSUITE\tTARGET\tTESTS\tMAX IOPS\tMAX MB/s\tMAX p99 ms\tLABELS")
	for _, r := range runs {
		tests := strconv.Itoa(r.Tests)
		if r.Failed > 0 {
			tests += fmt.Sprintf(" (%d failed)", r.Failed)
		}
		target := r.TargetPath
		if r.Hostname != "" {
			target = r.Hostname + ":" + target
		}
		if r.Device != "" {
			target += " (" + r.Device + ")"
		}
		p99 := "-"
		if !math.IsNaN(r.MaxP99Ns) {
			p99 = strconv.FormatFloat(r.MaxP99Ns/1e6, 'f', 3, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Line(r.ID), r.Start.Format("2006-01-02 15:04"), r.Status.State, termtext.Line(r.Suite),
			termtext.Line(target), tests, units.Whole(r.MaxIOPS), units.MB(r.MaxBWBytes), p99, termtext.Line(r.Labels))
	}
	return tw.Flush()
}
