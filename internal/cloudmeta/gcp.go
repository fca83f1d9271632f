package cloudmeta

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// gcpDisk is one entry of instance/disks/?recursive=true.
type gcpDisk struct {
	DeviceName flexString `json:"deviceName"`
	Index      flexString `json:"index"`
	Interface  flexString `json:"interface"`
	Mode       flexString `json:"mode"`
	Type       flexString `json:"type"`
}

// parseGCPPath reads a metadata value such as
// "projects/123456/machineTypes/n2-standard-8" and returns its last
// element.
func parseGCPPath(what string, b []byte) (string, error) {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	v, ok := name(s, maxNameLen)
	if !ok {
		return "", &parseError{What: what, Why: "not a name"}
	}
	return v, nil
}

// parseGCPDisks reads the instance's disk list.
func parseGCPDisks(b []byte) ([]gcpDisk, []string, error) {
	var ds []gcpDisk
	skipped, err := decodeJSON("GCP instance/disks", b, &ds)
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	if skipped != "" {
		notes = append(notes, skipped+"; ignored")
	}
	if len(ds) > maxDisks {
		notes = append(notes, fmt.Sprintf("GCP metadata lists %d disks; the first %d are read", len(ds), maxDisks))
		ds = ds[:maxDisks]
	}
	return ds, notes, nil
}

// gcpGet reads a metadata value; a response without the
// Metadata-Flavor: Google header is not Google's metadata server.
func gcpGet(ctx context.Context, c *client, u string) ([]byte, error) {
	r, err := c.do(ctx, "GET", u, map[string]string{"Metadata-Flavor": "Google"}, nil)
	if err != nil {
		return nil, err
	}
	if r.header.Get("Metadata-Flavor") != "Google" {
		return nil, &parseError{What: "GCP metadata answer", Why: "no Metadata-Flavor: Google header"}
	}
	return r.body, nil
}

func gcpProber(c *client, o *Options, base string) prober {
	root := base + "/computeMetadata/v1/instance/"
	return prober{provider: gcp, url: root + "machine-type", identify: func(ctx context.Context) (func(context.Context, *Info), error) {
		b, err := gcpGet(ctx, c, root+"machine-type")
		if err != nil {
			return nil, err
		}
		mt, err := parseGCPPath("GCP machine-type", b)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, info *Info) { gcpInfo(ctx, c, o, root, mt, info) }, nil
	}}
}

func gcpInfo(ctx context.Context, c *client, o *Options, root, machineType string, info *Info) {
	const src = "GCP metadata instance/"
	setVM(o.Catalog, info, machineType, src+"machine-type")
	if b, err := gcpGet(ctx, c, root+"zone"); err != nil {
		info.Notes = append(info.Notes, "zone: "+describe(err, o.DialTimeout, o.Timeout))
	} else if z, err := parseGCPPath("GCP zone", b); err != nil {
		info.Notes = append(info.Notes, "zone: "+err.Error())
	} else {
		setLocation(info, "", "", z, src+"zone")
	}
	b, err := gcpGet(ctx, c, root+"disks/?recursive=true")
	if err != nil {
		info.Notes = append(info.Notes, "disks: "+describe(err, o.DialTimeout, o.Timeout))
		return
	}
	ds, notes, err := parseGCPDisks(b)
	if err != nil {
		info.Notes = append(info.Notes, "disks: "+err.Error())
		return
	}
	info.Notes = append(info.Notes, notes...)
	t := tree{sys: o.SysRoot, dev: o.DevRoot}
	for i := range ds {
		info.Disks = append(info.Disks, gcpDiskInfo(o, t, &ds[i], fmt.Sprintf("%sdisks[%d]", src, i)))
	}
}

func gcpDiskInfo(o *Options, t tree, g *gcpDisk, src string) Disk {
	d := Disk{Role: "persistent"}
	typ, _ := name(strings.ToUpper(string(g.Type)), maxNameLen)
	d.Type = typ
	if typ != "" {
		d.Facts = append(d.Facts, Fact{Key: "type", Value: typ, Source: src + ".type"})
	}
	if typ == "SCRATCH" {
		d.Role = "scratch"
	}
	dev, ok := name(string(g.DeviceName), maxNameLen)
	if ok {
		d.Name = dev
		d.Facts = append(d.Facts, Fact{Key: "device_name", Value: dev, Source: src + ".deviceName"})
		for _, rel := range []string{"disk/by-id/google-" + dev, "disk/by-id/scsi-0Google_PersistentDisk_" + dev} {
			if n, ok := t.link(rel); ok {
				d.Device, d.DeviceHow = n, devLink(rel)+" -> "+n
				t.addSize(&d)
				break
			}
		}
		if d.Device == "" {
			d.Notes = append(d.Notes, "no /dev/disk/by-id/google-"+dev+" link: no kernel device tied to this disk")
		}
	} else {
		d.Notes = append(d.Notes, "the metadata gives no usable device name: no kernel device tied to this disk")
	}
	switch {
	case typ == "SCRATCH":
		d.Notes = append(d.Notes, "a Local SSD: the catalog has no limits for it")
	case typ == "PERSISTENT" || typ == "":
		size := "SIZE"
		if d.SizeBytes > 0 {
			size = strconv.FormatInt(gibCeil(d.SizeBytes), 10) + "GiB"
		}
		d.Notes = append(d.Notes, "the metadata does not say which Persistent Disk or Hyperdisk type this is: give --expect gcp:TYPE:"+size+" (TYPE pd-balanced, pd-ssd, pd-standard, hyperdisk-balanced...)")
	case strings.HasPrefix(typ, "PERSISTENT-"):
		// Recent metadata servers name the type (PERSISTENT-BALANCED,
		// PERSISTENT-SSD); Google's reference lists PERSISTENT only.
		kind := strings.ToLower(strings.TrimPrefix(typ, "PERSISTENT-"))
		fam := ""
		for _, cand := range []string{"pd-" + kind, kind} {
			if f := o.Catalog.Family(gcp, cand); f != nil {
				fam = cand
				break
			}
		}
		if fam == "" {
			d.Notes = append(d.Notes, "the limits catalog has no disk type for "+typ)
			break
		}
		spec, notes, why := diskSpec(o.Catalog, gcp, fam, gibCeil(d.SizeBytes), 0, 0)
		if spec == "" {
			d.Notes = append(d.Notes, "no catalog spec: "+why)
			break
		}
		d.Spec = spec
		d.Notes = append(d.Notes, notes...)
	default:
		d.Notes = append(d.Notes, "unknown disk type "+typ)
	}
	return d
}
