package headroom

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/watch"
	"go.yaml.in/yaml/v3"
)

// ExpectError is an --expect value or a mapping file that cannot be
// read, with what to give instead.
type ExpectError struct {
	Err  error
	Help string
}

func (e *ExpectError) Error() string { return e.Err.Error() }
func (e *ExpectError) Unwrap() error { return e.Err }

// Hint says what to give instead.
func (e *ExpectError) Hint() string { return e.Help }

const expectHelp = "DEVICE=SPEC, INSTANCE/DEVICE=SPEC or SPEC for every device; SPEC a catalog disk (azure:P10, aws:gp3:200GiB) or iops=N,bw=RATE[,burst-iops=N,burst-bw=RATE,burst-s=S]"

// kvKeys are the keys of a key=value spec: an --expect whose first word
// is one of them is a spec for every device.
var kvKeys = map[string]bool{"name": true, "iops": true, "bw": true, "burst-iops": true, "burst-bw": true, "burst-s": true, "vm-iops": true, "vm-bw": true}

// ParseRule reads one --expect: DEVICE=SPEC, INSTANCE/DEVICE=SPEC, or a
// SPEC alone for every device.
func ParseRule(s string, source string, cat *limits.Catalog) (Rule, error) {
	s = strings.TrimSpace(s)
	head, spec, ok := strings.Cut(s, "=")
	if !ok || kvKeys[strings.TrimSpace(head)] || strings.Contains(head, ":") && !strings.Contains(head, "/") {
		c, err := ParseCap(s, source, cat)
		return Rule{Cap: c}, err
	}
	r := Rule{Device: head}
	if i := strings.LastIndexByte(head, '/'); i >= 0 {
		r.Instance, r.Device = head[:i], head[i+1:]
	}
	r.Device = strings.TrimPrefix(r.Device, "/dev/")
	if r.Device == "" || strings.ContainsAny(r.Device, " \t\n{}\"") || strings.ContainsAny(r.Instance, " \t\n{}\"") || r.Instance == "" && strings.Contains(head, "/") && !strings.HasPrefix(head, "/dev/") {
		return Rule{}, &ExpectError{Err: fmt.Errorf("--expect %q: %q is not a device", s, head), Help: expectHelp}
	}
	if strings.HasPrefix(head, "/dev/") {
		r.Instance = ""
	}
	c, err := ParseCap(spec, source, cat)
	r.Cap = c
	return r, err
}

// ParseCap reads a spec: a catalog disk, or key=value figures.
func ParseCap(spec, source string, cat *limits.Catalog) (*Cap, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, &ExpectError{Err: errors.New("an empty disk spec"), Help: expectHelp}
	}
	if k, _, hasKV := strings.Cut(spec, "="); hasKV && !strings.Contains(k, ":") {
		w, err := watch.ParseExpect(spec, "")
		if err != nil {
			return nil, err
		}
		name := spec
		if w.Name != "the disk" {
			name = w.Name
		}
		return &Cap{Name: name, Source: source, IOPS: w.IOPS, BWBytes: w.BWBytes,
			BurstIOPS: w.BurstIOPS, BurstBWBytes: w.BurstBWBytes, BurstSeconds: w.BurstSeconds}, nil
	}
	if cat == nil {
		return nil, &ExpectError{Err: fmt.Errorf("%q: no catalog to look it up in", spec), Help: "give iops=N,bw=RATE instead"}
	}
	d, err := cat.ParseDisk(spec)
	if err != nil {
		return nil, err
	}
	return CapOfDisk(d, source), nil
}

// CapOfDisk is a catalog disk's caps: its sustained combined limits, its
// burst when it bursts without opting in, and its IO-size accounting.
func CapOfDisk(d *limits.Disk, source string) *Cap {
	c := &Cap{Name: d.Spec, Source: source, IOPS: d.Read.IOPS, BWBytes: d.Read.BWBytes, Disk: d}
	if b := d.Burst; b != nil && !b.OptIn && b.Seconds > 0 && b.Model == "credit" {
		c.BurstIOPS, c.BurstBWBytes, c.BurstSeconds = b.IOPS, b.BWBytes, b.Seconds
	}
	if d.Edition != nil {
		c.IOUnitBytes = d.Edition.IOUnitKiB * 1024
	}
	return c
}

// Mapping is a mapping file: each volume's cap, and each node's VM size.
//
//	volumes:
//	  - {instance: "node-1:9100", device: sdb, expect: "azure:P10", claim: db/data-0}
//	  - {instance: "node-2:9100", device: nvme1n1, expect: "aws:gp3:100GiB", volume_id: vol-0abc}
//	  - {device: nvme1n1, expect: "iops=3000,bw=125MB"}
//	nodes:
//	  - {instance: "node-1:9100", vm: Standard_D4s_v3}
type Mapping struct {
	Volumes []struct {
		Instance string `yaml:"instance"`
		Device   string `yaml:"device"`
		Expect   string `yaml:"expect"`
		Claim    string `yaml:"claim"`
		VolumeID string `yaml:"volume_id"`
	} `yaml:"volumes"`
	Nodes []struct {
		Instance string `yaml:"instance"`
		VM       string `yaml:"vm"`
	} `yaml:"nodes"`
}

// MaxMappingEntries bounds a mapping file's volumes and nodes.
const MaxMappingEntries = 20000

// ParseMapping reads a mapping file into rules and VM sizes by instance.
func ParseMapping(b []byte, cat *limits.Catalog) ([]Rule, map[string]string, error) {
	var m Mapping
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	bad := func(err error) error {
		return &ExpectError{Err: fmt.Errorf("mapping file: %w", err), Help: "volumes: [{instance: NODE:9100, device: sdb, expect: azure:P10, claim: NS/NAME}], nodes: [{instance: NODE:9100, vm: Standard_D4s_v3}]"}
	}
	if err := dec.Decode(&m); err != nil {
		return nil, nil, bad(err)
	}
	if len(m.Volumes)+len(m.Nodes) > MaxMappingEntries {
		return nil, nil, bad(fmt.Errorf("%d entries; at most %d are read", len(m.Volumes)+len(m.Nodes), MaxMappingEntries))
	}
	var rules []Rule
	for i, v := range m.Volumes {
		if v.Device == "" || v.Expect == "" {
			return nil, nil, bad(fmt.Errorf("volume %d needs a device and an expect", i+1))
		}
		if strings.ContainsAny(v.Device+v.Instance, " \t\n{}\"") {
			return nil, nil, bad(fmt.Errorf("volume %d: %q on %q is not a device and an instance", i+1, v.Device, v.Instance))
		}
		c, err := ParseCap(v.Expect, SourceMapping, cat)
		if err != nil {
			return nil, nil, bad(fmt.Errorf("volume %d (%s): %w", i+1, v.Device, err))
		}
		rules = append(rules, Rule{Instance: v.Instance, Device: strings.TrimPrefix(v.Device, "/dev/"), Claim: v.Claim, Cap: c, VolumeID: v.VolumeID})
	}
	vms := map[string]string{}
	for i, n := range m.Nodes {
		if n.Instance == "" || n.VM == "" {
			return nil, nil, bad(fmt.Errorf("node %d needs an instance and a vm", i+1))
		}
		if cat != nil && cat.VM(n.VM) == nil {
			return nil, nil, bad(fmt.Errorf("node %d: VM size %q is not in the catalog", i+1, n.VM))
		}
		vms[n.Instance] = n.VM
	}
	return rules, vms, nil
}
