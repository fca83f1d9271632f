package k8s

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/iolens/iolens/internal/units"
)

// WriteClasses writes the storage classes as a table, the last column
// the catalog disk each provisions at size (the volume size as given).
func WriteClasses(w io.Writer, cls []ClassInfo, size string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "NAME\tPROVISIONER\tDEFAULT\tBINDING\tRECLAIM\tEXPANSION\tPARAMETERS\tDISK AT %s\n", size)
	for _, c := range cls {
		var ps []string
		for k, v := range c.Important {
			ps = append(ps, k+"="+v)
		}
		sort.Strings(ps)
		def := ""
		if c.Default {
			def = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\t%s\t%s\n", c.Name, c.Provisioner, units.OrDash(def), c.VolumeBindingMode,
			c.ReclaimPolicy, c.AllowExpansion, units.OrDash(strings.Join(ps, ",")), units.OrDash(c.SKU))
	}
	return tw.Flush()
}

// WriteText writes the objects Cleanup would delete, one namespace/name
// a line: jobs, pods, PVCs, then ConfigMaps.
func (l Leftovers) WriteText(w io.Writer) {
	for _, list := range [][]string{l.Jobs, l.Pods, l.PVCs, l.ConfigMaps} {
		for _, o := range list {
			fmt.Fprintln(w, o)
		}
	}
}
