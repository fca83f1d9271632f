package store

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.1f\t%s\t%s\n", r.ID, r.Start.Format("2006-01-02 15:04"), r.Status.State, r.Suite,
			oneLine(target), tests, r.MaxIOPS, r.MaxBWBytes/1e6, strconv.FormatFloat(r.MaxP99Ns/1e6, 'f', 3, 64), oneLine(r.Labels))
	}
	return tw.Flush()
}

// oneLine keeps a user string from breaking the table.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}
