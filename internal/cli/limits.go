package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
	"github.com/spf13/cobra"
)

// expectFlags are the flags that describe what a disk should deliver:
// --expect DISK on run/report/analyze, DISK on iolens limits.
type expectFlags struct {
	vm       string
	attached []string
	cache    string
}

func (e *expectFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&e.vm, "vm", "", "VM size the disk is attached to (e.g. Standard_DS2_v2, aws:m5.large, ibm:bx2-4x16)")
	f.StringSliceVar(&e.attached, "attached", nil, "other data volumes on the same VM, as disk specs (IBM splits volume bandwidth across them)")
	f.StringVar(&e.cache, "cache", "none", "Azure host cache mode: none, readonly, readwrite")
}

// expectation resolves a disk spec and the flags against the catalog.
func (e *expectFlags) expectation(disk string) (*limits.Expectation, error) {
	c, err := limits.Default()
	if err != nil {
		return nil, err
	}
	x, err := c.ParseExpectation(disk, e.vm, e.attached, e.cache)
	return x, specError(err)
}

// specError turns a catalog spec error into a usage error with its hint.
func specError(err error) error {
	var se *limits.SpecError
	if errors.As(err, &se) {
		return &UsageError{Err: se, Hint: se.Hint}
	}
	return err
}

type limitsOptions struct {
	expectFlags
	ioSizes    []string
	output     string
	targetIOPS float64
	targetMBps float64
	provider   string
}

func newLimitsCommand(streams IOStreams) *cobra.Command {
	o := &limitsOptions{}
	cmd := &cobra.Command{
		Use:   "limits DISK",
		Short: "Expected IOPS and MB/s ceilings of a cloud disk, and which limit binds",
		Long: `Show what a cloud disk should deliver at each IO size: the IOPS and MB/s
ceilings, the component that binds (the disk's IOPS or throughput cap,
IO-size counting, the VM's cap for the cache mode, IBM's per-volume share
of the VSI bandwidth), and the burst allowance and how long it lasts.

DISK is a catalog tier (azure:P15), a family at a size (azure:premium-ssd:500GiB,
aws:gp2:100GiB, ibm:10iops-tier:300GiB), or a provisioned disk
(aws:gp3:iops=6000,throughput=250). Sizes take GiB or GB; a tiered disk
rounds up to its tier. Add @YYYY to the name for the limits documented then
(azure:E10@2019). 'iolens catalog list' shows every family and VM size.

With --target-iops / --target-mbps and --provider instead of DISK, list the
smallest disk of every family that reaches the target.`,
		Example: `  iolens limits azure:P15
  iolens limits azure:premium-ssd:250GB --vm Standard_DS2_v2 --cache readonly
  iolens limits aws:gp3:iops=6000,throughput=250 --vm aws:m5.large -o json
  iolens limits ibm:10iops-tier:300GiB --vm ibm:bx2-4x16 --attached ibm:10iops-tier:600GiB
  iolens limits --target-iops 5000 --target-mbps 200 --provider azure --vm Standard_D8s_v3`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.output != "text" && o.output != "json" {
				return &UsageError{Err: fmt.Errorf("-o %q", o.output), Hint: "formats: text, json"}
			}
			if o.targetIOPS > 0 || o.targetMBps > 0 {
				if len(args) > 0 {
					return &UsageError{Err: errors.New("give DISK or --target-iops/--target-mbps, not both"), Hint: "iolens limits --target-iops 5000 --provider azure"}
				}
				return o.sizing(streams.Out)
			}
			if len(args) == 0 {
				return &UsageError{Err: errors.New("which disk?"), Hint: "e.g. iolens limits azure:P15; 'iolens catalog list' shows the catalog"}
			}
			return o.run(streams.Out, args[0])
		},
	}
	o.expectFlags.add(cmd)
	f := cmd.Flags()
	f.StringSliceVar(&o.ioSizes, "io-size", []string{"4k", "16k", "256k", "1m"}, "IO sizes to show")
	f.StringVarP(&o.output, "output", "o", "text", "format: text, json")
	f.Float64Var(&o.targetIOPS, "target-iops", 0, "find the smallest disk that sustains this many IOPS")
	f.Float64Var(&o.targetMBps, "target-mbps", 0, "find the smallest disk that sustains this many MB/s (10^6 B/s)")
	f.StringVar(&o.provider, "provider", "", "provider for --target-*: azure, aws, gcp, ibm")
	return cmd
}

type limitsReport struct {
	Expectation *limits.Expectation `json:"expectation"`
	Unit        string              `json:"unit"`
	Ceilings    []limits.Ceiling    `json:"ceilings"`
	Sources     []string            `json:"sources"`
}

func (o *limitsOptions) run(w io.Writer, disk string) error {
	var sizes []int64
	for _, s := range o.ioSizes {
		n, err := units.ParseSize(s)
		if err != nil || n <= 0 {
			return &UsageError{Err: fmt.Errorf("--io-size %q", s), Hint: "sizes like 4k, 16k, 256k, 1m"}
		}
		sizes = append(sizes, n)
	}
	x, err := o.expectation(disk)
	if err != nil {
		return err
	}
	c := limits.MustDefault()
	rep := limitsReport{Expectation: x, Unit: x.Disk.Edition.Unit}
	split := x.Disk.Read != x.Disk.Write
	if r, _ := x.VMRate(true); r != (limits.Rate{}) {
		if rr, _ := x.VMRate(false); rr != r {
			split = true
		}
	}
	for _, s := range sizes {
		rep.Ceilings = append(rep.Ceilings, x.At(s, false))
		if split || x.Cache != limits.CacheNone {
			rep.Ceilings = append(rep.Ceilings, x.At(s, true))
		}
	}
	keys := append([]string{}, x.Disk.Edition.SourceKeys...)
	if x.VM != nil {
		keys = append(keys, x.VM.SourceKeys...)
	}
	keys = append(keys, c.Providers[x.Disk.Family.Provider].SourceKeys...)
	seen := map[string]bool{}
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			s := c.Sources[k]
			rep.Sources = append(rep.Sources, k+": "+sourceRef(s))
		}
	}
	if o.output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return limitsText(w, c, rep, split || x.Cache != limits.CacheNone)
}

func sourceRef(s limits.Source) string {
	ref := s.URL
	if ref == "" && s.Repo != "" {
		ref = s.Repo + ":" + s.Path
		if s.Commit != "" {
			ref += "@" + s.Commit[:min(12, len(s.Commit))]
		}
	}
	if ref == "" {
		ref = s.Note
	}
	if s.Date != "" {
		ref += " (" + s.Date + ")"
	}
	return s.Title + ", " + ref
}

func mbps(bw float64) string { return fmt.Sprintf("%.1f", bw/1e6) }

func limitsText(w io.Writer, c *limits.Catalog, rep limitsReport, dirs bool) error {
	x := rep.Expectation
	d := x.Disk
	e := d.Edition
	fmt.Fprintf(w, "disk    %s  %s", d.Spec, d.Family.Name)
	if d.Tier != nil {
		fmt.Fprintf(w, " %s", d.Tier.Name)
	}
	if d.SizeGiB > 0 {
		unit := "GiB"
		if d.Family.Provider == "ibm" {
			unit = "GB"
		}
		fmt.Fprintf(w, ", %g %s", d.SizeGiB, unit)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "        %s IOPS, %s MB/s sustained", fmtNum(d.Read.IOPS), mbps(d.Read.BWBytes))
	if d.Write != d.Read {
		fmt.Fprintf(w, " (writes %s IOPS, %s MB/s)", fmtNum(d.Write.IOPS), mbps(d.Write.BWBytes))
	}
	fmt.Fprintf(w, "; catalog unit %s", e.Unit)
	if e.Unit == "MiB/s" {
		fmt.Fprintf(w, " (%.4g %s = %s MB/s)", d.Tput, e.Unit, mbps(d.Read.BWBytes))
	}
	fmt.Fprintln(w)
	if e.IOUnitKiB > 0 {
		fmt.Fprintf(w, "        IOs larger than %g KiB count as several IOs\n", e.IOUnitKiB)
	}
	if e.NominalIOKiB > 0 {
		fmt.Fprintf(w, "        IOPS figure defined at %g KiB IOs\n", e.NominalIOKiB)
	}
	if e.SLA != "" {
		fmt.Fprintf(w, "        %s\n", e.SLA)
	}
	if b := d.Burst; b != nil {
		fmt.Fprintf(w, "burst   %s\n", burstLine(b))
	}
	if v := x.VM; v != nil {
		fmt.Fprintf(w, "vm      %s", v.ID)
		r, vb := x.VMRate(false)
		switch {
		case v.BandwidthMbps > 0:
			fmt.Fprintf(w, ": %s Mbps instance bandwidth", fmtNum(v.BandwidthMbps))
		case r != (limits.Rate{}):
			fmt.Fprintf(w, ": %s IOPS, %s MB/s uncached", fmtNum(r.IOPS), mbps(r.BWBytes))
			if rw, _ := x.VMRate(true); rw != r {
				fmt.Fprintf(w, " (writes %s IOPS, %s MB/s)", fmtNum(rw.IOPS), mbps(rw.BWBytes))
			}
		default:
			fmt.Fprintf(w, ": no limits for this disk type in the catalog")
		}
		if v.Cached != nil {
			fmt.Fprintf(w, "; cached %s IOPS, %g %s (%g GiB cache)", fmtNum(v.Cached.IOPS), v.Cached.Tput, v.Unit, v.Cached.CacheGiB)
		}
		fmt.Fprintln(w)
		if vb != nil {
			fmt.Fprintf(w, "        VM burst: %s\n", burstLine(vb))
		}
	}
	if s := x.Share; s != nil {
		fmt.Fprintf(w, "share   %s Mbps x %.0f%% = %s Mbps for volumes, minus %s for the boot volume = %s Mbps for data volumes\n",
			fmtNum(s.InstanceMbps), s.VolumesMbps/s.InstanceMbps*100, fmtNum(s.VolumesMbps), fmtNum(s.BootMbps), fmtNum(s.AvailableMbps))
		for i, a := range s.AllocMbps {
			who := "this disk"
			if i > 0 {
				who = x.Attached[i-1].Spec
			}
			fmt.Fprintf(w, "        %-28s limit %s Mbps, allocated %s Mbps (%s MB/s)\n", who, fmtNum(s.LimitsMbps[i]), fmtNum(a), mbps(a*1e6/8))
		}
	}
	fmt.Fprintf(w, "cache   %s\n", x.Cache)
	for _, n := range append(append([]string{}, d.Notes...), x.Notes...) {
		fmt.Fprintf(w, "note    %s\n", n)
	}
	if e.Note != "" {
		fmt.Fprintf(w, "note    %s\n", e.Note)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "IO SIZE\tIOPS\tMB/s\tBINDS\tBURST IOPS\tBURST MB/s\tBURST FOR"
	if dirs {
		head = "IO SIZE\tDIR\tIOPS\tMB/s\tBINDS\tBURST IOPS\tBURST MB/s\tBURST FOR\tCACHE HIT IOPS\tCACHE HIT MB/s"
	}
	fmt.Fprintln(tw, head)
	for _, ce := range rep.Ceilings {
		row := sizeLabel(ce.IOSizeBytes) + "\t"
		if dirs {
			row += map[bool]string{false: "read", true: "write"}[ce.Write] + "\t"
		}
		row += fmt.Sprintf("%s\t%s\t%s", fmtNum(ce.IOPS), mbps(ce.BWBytes), ce.Binds.Name)
		if ce.Burst != nil {
			row += fmt.Sprintf("\t%s\t%s\t%s", fmtNum(ce.Burst.IOPS), mbps(ce.Burst.BWBytes), durLabel(ce.Burst.Seconds))
		} else {
			row += "\t-\t-\t-"
		}
		if dirs {
			if ce.CacheHit != nil {
				row += fmt.Sprintf("\t%s\t%s", fmtNum(ce.CacheHit.IOPS), mbps(ce.CacheHit.BWBytes))
			} else {
				row += "\t-\t-"
			}
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	var whys []string
	seen := map[string]bool{}
	for _, ce := range rep.Ceilings {
		if ce.Binds.Why != "" && !seen[ce.Binds.Why] {
			seen[ce.Binds.Why] = true
			whys = append(whys, fmt.Sprintf("%s: %s", sizeLabel(ce.IOSizeBytes), ce.Binds.Why))
		}
	}
	if len(whys) > 0 {
		fmt.Fprintln(w)
		for _, s := range whys {
			fmt.Fprintf(w, "why     %s\n", s)
		}
	}
	fmt.Fprintln(w, "\nsources")
	for _, s := range rep.Sources {
		fmt.Fprintf(w, "  %s\n", s)
	}
	return nil
}

func burstLine(b *limits.BurstInfo) string {
	var parts []string
	if b.IOPS > 0 {
		parts = append(parts, fmtNum(b.IOPS)+" IOPS")
	}
	if b.BWBytes > 0 {
		parts = append(parts, mbps(b.BWBytes)+" MB/s")
	}
	s := strings.Join(parts, ", ")
	switch {
	case b.OptIn:
		s += " when on-demand bursting is enabled (billed, no time limit)"
	case b.Seconds > 0:
		s += ", " + durLabel(b.Seconds) + " from a full bucket"
	}
	s += " (" + b.Model
	if b.StartsFull {
		s += "; a new disk starts with a full bucket"
	}
	if b.BucketIOs > 0 {
		s += fmt.Sprintf("; bucket %s IOs", fmtNum(b.BucketIOs))
	}
	if b.BucketBytes > 0 {
		s += fmt.Sprintf("; bucket %s GB", fmtNum(b.BucketBytes/1e9))
	}
	return s + ")"
}

func fmtNum(x float64) string {
	if x >= 1000 {
		n := fmt.Sprintf("%.0f", x)
		var b strings.Builder
		for i, r := range n {
			if i > 0 && (len(n)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(r)
		}
		return b.String()
	}
	if x == float64(int64(x)) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

func sizeLabel(b int64) string {
	switch {
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", b>>20)
	case b >= 1<<10 && b%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", b>>10)
	}
	return fmt.Sprintf("%d B", b)
}

func durLabel(s float64) string {
	switch {
	case s <= 0:
		return "unlimited"
	case s >= 3600:
		return fmt.Sprintf("%.1f h", s/3600)
	case s >= 60:
		return fmt.Sprintf("%.0f min", s/60)
	}
	return fmt.Sprintf("%.0f s", s)
}

func (o *limitsOptions) sizing(w io.Writer) error {
	c := limits.MustDefault()
	if o.provider == "" {
		return &UsageError{Err: errors.New("--target-* needs --provider"), Hint: "providers: " + strings.Join(c.ProviderNames(), ", ")}
	}
	vm := o.vm
	if vm != "" && !strings.Contains(vm, ":") {
		vm = o.provider + ":" + vm
	}
	opts, err := c.Smallest(strings.ToLower(o.provider), o.targetIOPS, o.targetMBps*1e6, vm)
	if err != nil {
		return specError(err)
	}
	if o.output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(opts)
	}
	if len(opts) == 0 {
		fmt.Fprintf(w, "no %s disk reaches %s IOPS and %s MB/s\n", o.provider, fmtNum(o.targetIOPS), fmtNum(o.targetMBps))
		return nil
	}
	fmt.Fprintf(w, "smallest %s disks that sustain %s IOPS and %s MB/s", o.provider, fmtNum(o.targetIOPS), fmtNum(o.targetMBps))
	if vm != "" {
		fmt.Fprintf(w, " (VM %s)", vm)
	}
	fmt.Fprintln(w)
	sort.SliceStable(opts, func(i, j int) bool { return opts[i].VMBinds == "" && opts[j].VMBinds != "" })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SPEC\tFAMILY\tIOPS\tMB/s\tBURST\tNOTE")
	for _, op := range opts {
		d := op.Disk
		burst := "-"
		if d.Burst != nil && !d.Burst.OptIn {
			burst = fmtNum(d.Burst.IOPS) + " IOPS"
		}
		note := op.VMBinds
		if note == "" && len(d.Notes) > 0 {
			note = d.Notes[0]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", op.Spec, d.Family.Name, fmtNum(d.Read.IOPS), mbps(d.Read.BWBytes), burst, note)
	}
	return tw.Flush()
}

func newCatalogCommand(streams IOStreams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "catalog [list|show ID]",
		Short: "Browse the built-in catalog of cloud disk and VM limits, with sources",
		Example: `  iolens catalog list
  iolens catalog show azure:premium-ssd
  iolens catalog show azure:Standard_DS2_v2 -o json
  iolens catalog show aws:gp3`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := limits.Default()
			if err != nil {
				return err
			}
			if output != "text" && output != "json" {
				return &UsageError{Err: fmt.Errorf("-o %q", output), Hint: "formats: text, json"}
			}
			switch {
			case len(args) == 0 || args[0] == "list":
				return catalogList(streams.Out, c, output)
			case args[0] == "show" && len(args) == 2:
				return catalogShow(streams.Out, c, args[1], output)
			}
			return &UsageError{Err: fmt.Errorf("unknown catalog command %q", strings.Join(args, " ")), Hint: "iolens catalog list | iolens catalog show ID"}
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "format: text, json")
	return cmd
}

func catalogList(w io.Writer, c *limits.Catalog, output string) error {
	if output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tUNIT\tEDITIONS\tNAME")
	for _, f := range c.Families {
		var eds []string
		for _, e := range f.Editions {
			to := e.To
			if to == "" {
				to = "now"
			}
			eds = append(eds, e.From+".."+to)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.ID, f.Kind, f.Editions[0].Unit, strings.Join(eds, ", "), f.Name)
	}
	for _, v := range c.VMs {
		desc := ""
		switch {
		case v.BandwidthMbps > 0:
			desc = fmt.Sprintf("%s Mbps instance bandwidth", fmtNum(v.BandwidthMbps))
		case v.Uncached != nil:
			desc = fmt.Sprintf("%s IOPS, %g %s", fmtNum(v.Uncached.IOPS), v.Uncached.Tput, v.Unit)
		default:
			var ts []string
			for t := range v.PerType {
				ts = append(ts, t)
			}
			sort.Strings(ts)
			desc = "per disk type: " + strings.Join(ts, ", ")
		}
		unit := v.Unit
		if unit == "" {
			unit = "Mbps"
		}
		fmt.Fprintf(tw, "%s\tvm\t%s\t-\t%s\n", v.ID, unit, desc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	n := map[string]int{}
	for _, f := range c.Families {
		n[f.Provider]++
		for _, e := range f.Editions {
			n[f.Provider] += len(e.Tiers)
		}
	}
	for _, v := range c.VMs {
		n[v.Provider]++
	}
	var parts []string
	for _, p := range c.ProviderNames() {
		parts = append(parts, fmt.Sprintf("%s %d", p, n[p]))
	}
	_, err := fmt.Fprintf(w, "\nentries (families, tiers and VM sizes): %s; researched %s. 'iolens catalog show ID' for the figures and sources.\n", strings.Join(parts, ", "), c.Researched)
	return err
}

func catalogShow(w io.Writer, c *limits.Catalog, id string, output string) error {
	prov, name, _ := strings.Cut(id, ":")
	var item any
	var srcKeys []string
	if f := c.Family(strings.ToLower(prov), name); f != nil {
		item = f
		for _, e := range f.Editions {
			srcKeys = append(srcKeys, e.SourceKeys...)
		}
	} else if v := c.VM(id); v != nil {
		item = v
		srcKeys = v.SourceKeys
	} else if d, err := c.ParseDisk(id); err == nil {
		// A tier name: show its family.
		item = d.Family
		for _, e := range d.Family.Editions {
			srcKeys = append(srcKeys, e.SourceKeys...)
		}
	} else {
		return &UsageError{Err: fmt.Errorf("no catalog entry %q", id), Hint: "'iolens catalog list' shows the ids"}
	}
	srcs := map[string]limits.Source{}
	for _, k := range srcKeys {
		srcs[k] = c.Sources[k]
	}
	out := map[string]any{"entry": item, "sources": srcs}
	if output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	switch it := item.(type) {
	case *limits.Family:
		fmt.Fprintf(w, "%s  %s (%s)\n", it.ID, it.Name, it.Kind)
		if len(it.Aliases) > 0 {
			fmt.Fprintf(w, "aliases: %s\n", strings.Join(it.Aliases, ", "))
		}
		for _, e := range it.Editions {
			to := e.To
			if to == "" {
				to = "now"
			}
			fmt.Fprintf(w, "\nedition %s..%s  unit %s", e.From, to, e.Unit)
			if e.IOUnitKiB > 0 {
				fmt.Fprintf(w, "  IO counted in %g KiB units", e.IOUnitKiB)
			}
			fmt.Fprintln(w)
			if e.Note != "" {
				fmt.Fprintf(w, "  %s\n", e.Note)
			}
			if len(e.Unverified) > 0 {
				fmt.Fprintf(w, "  unverified: %s\n", strings.Join(e.Unverified, "; "))
			}
			if len(e.Tiers) > 0 {
				tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
				fmt.Fprintf(tw, "  TIER\tGiB\tIOPS\t%s\tBURST\n", e.Unit)
				for _, t := range e.Tiers {
					b := "-"
					if t.Burst != nil {
						b = fmt.Sprintf("%s IOPS, %g %s (%s", fmtNum(t.Burst.IOPS), t.Burst.Tput, e.Unit, t.Burst.Model)
						if t.Burst.Seconds > 0 {
							b += ", " + durLabel(t.Burst.Seconds)
						}
						b += ")"
					}
					fmt.Fprintf(tw, "  %s\t%g\t%s\t%g\t%s\n", t.Name, t.SizeGiB, fmtNum(t.IOPS), t.Tput, b)
				}
				tw.Flush()
			} else {
				j, _ := json.Marshal(map[string]any{"size": e.SizeGiB, "iops": e.IOPS, "tput": e.Tput, "burst": e.Burst})
				fmt.Fprintf(w, "  formula: %s\n", j)
			}
			fmt.Fprintf(w, "  sources: %s\n", strings.Join(e.SourceKeys, ", "))
		}
	case *limits.VM:
		j, _ := json.MarshalIndent(it, "", "  ")
		fmt.Fprintf(w, "%s\n", j)
	}
	fmt.Fprintln(w, "\nsources")
	var keys []string
	for k := range srcs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %s: %s\n", k, sourceRef(srcs[k]))
	}
	return nil
}

// expectOptions is --expect DISK with --vm, --attached and --cache, for
// run and report: results get "ceiling" findings against what the disk
// should deliver.
type expectOptions struct {
	disk string
	expectFlags
}

func (e *expectOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&e.disk, "expect", "", "compare results with what this disk should deliver (a catalog spec: azure:P15, aws:gp3:iops=6000; see 'iolens limits')")
	e.expectFlags.add(cmd)
}

// diagnoser returns a function adding ceiling findings to a result, nil
// without --expect.
func (e *expectOptions) diagnoser(cmd *cobra.Command) (func(*result.Result), error) {
	if e.disk == "" {
		for _, n := range []string{"vm", "attached", "cache"} {
			if cmd.Flags().Changed(n) {
				return nil, &UsageError{Err: fmt.Errorf("--%s needs --expect", n), Hint: "say which disk: --expect azure:P15 --vm Standard_DS2_v2"}
			}
		}
		return nil, nil
	}
	x, err := e.expectation(e.disk)
	if err != nil {
		return nil, err
	}
	return func(r *result.Result) { diagnose(r, x) }, nil
}

// diagnose replaces a result's ceiling findings with those against x and
// labels the result with the disk and VM it was compared with.
func diagnose(r *result.Result, x *limits.Expectation) {
	keep := r.Findings[:0:0]
	for _, f := range r.Findings {
		if f.Kind != limits.KindCeiling {
			keep = append(keep, f)
		}
	}
	r.Findings = append(keep, limits.MustDefault().Diagnose(r, x)...)
	if r.Target.Labels == nil {
		r.Target.Labels = map[string]string{}
	}
	r.Target.Labels["expect"] = x.Disk.Spec
	if x.VM != nil {
		r.Target.Labels["expect_vm"] = x.VM.ID
	}
}
