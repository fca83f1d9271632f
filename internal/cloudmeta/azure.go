package cloudmeta

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/units"
)

// azureDoc is the part of the IMDS instance document iolens reads
// (GET /metadata/instance, compute section). IMDS sends every primitive
// as a string and leaves inapplicable ones empty.
type azureDoc struct {
	Compute struct {
		AzEnvironment  flexString `json:"azEnvironment"`
		Location       flexString `json:"location"`
		VMSize         flexString `json:"vmSize"`
		Zone           flexString `json:"zone"`
		StorageProfile struct {
			OSDisk    azureDisk   `json:"osDisk"`
			DataDisks []azureDisk `json:"dataDisks"`
		} `json:"storageProfile"`
	} `json:"compute"`
}

type azureDisk struct {
	Name              flexString `json:"name"`
	Caching           flexString `json:"caching"`
	DiskSizeGB        flexString `json:"diskSizeGB"`
	DiskCapacityBytes flexString `json:"diskCapacityBytes"`
	Lun               flexString `json:"lun"`
	ManagedDisk       struct {
		ID                 flexString `json:"id"`
		StorageAccountType flexString `json:"storageAccountType"`
	} `json:"managedDisk"`
	DiffDiskSettings struct {
		Option flexString `json:"option"`
	} `json:"diffDiskSettings"`
	Vhd struct {
		URI flexString `json:"uri"`
	} `json:"vhd"`
	// Populated only for Ultra Disks (empty strings otherwise).
	OpsPerSecondThrottle    flexString `json:"opsPerSecondThrottle"`
	BytesPerSecondThrottle  flexString `json:"bytesPerSecondThrottle"`
	WriteAcceleratorEnabled flexString `json:"writeAcceleratorEnabled"`
}

// Bounds on figures an IMDS document can hold: Azure's largest disk is
// 64 TiB and its largest data LUN 63; anything far beyond is not a disk.
const (
	maxDiskGiB       = 1 << 20
	maxLUN           = 255
	maxIOPS          = 10_000_000
	maxBWBytes       = 1e12
	maxDisks         = 256
	maxNameLen       = 128
	maxIDLen         = 512
	azureDataCtrlID  = "{f8b3781b-1e82-4818-a1c3-63d806ec15bb}"
	azureRootCtrlPfx = "00000000-0000-"
)

// parseAzure reads an IMDS instance document.
func parseAzure(b []byte) (*azureDoc, []string, error) {
	var d azureDoc
	skipped, err := decodeJSON("Azure IMDS instance document", b, &d)
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	if skipped != "" {
		notes = append(notes, skipped+"; ignored")
	}
	if _, ok := name(string(d.Compute.VMSize), maxNameLen); !ok {
		return nil, nil, &parseError{What: "Azure IMDS instance document", Why: "no usable compute.vmSize"}
	}
	return &d, notes, nil
}

func azureProber(c *client, o *Options) prober {
	u := o.BaseURL + "/metadata/instance?api-version=" + azureAPIVersion
	return prober{provider: azure, url: u, identify: func(ctx context.Context) (func(context.Context, *Info), error) {
		r, err := c.do(ctx, "GET", u, map[string]string{"Metadata": "true"}, nil)
		if err != nil {
			return nil, err
		}
		doc, notes, err := parseAzure(r.body)
		if err != nil {
			return nil, err
		}
		return func(_ context.Context, info *Info) {
			info.Notes = append(info.Notes, notes...)
			azureInfo(o, doc, info)
		}, nil
	}}
}

// azureInfo fills info from an IMDS document and the sys and dev trees.
func azureInfo(o *Options, doc *azureDoc, info *Info) {
	const src = "Azure IMDS compute."
	cp := &doc.Compute
	size, _ := name(string(cp.VMSize), maxNameLen)
	setVM(o.Catalog, info, size, src+"vmSize")
	setLocation(info, string(cp.Location), src+"location", string(cp.Zone), src+"zone")
	t := tree{sys: o.SysRoot, dev: o.DevRoot}
	osd := azureDiskInfo(o, &cp.StorageProfile.OSDisk, "os", src+"storageProfile.osDisk")
	if osd.Name != "" || osd.Type != "" || osd.SizeBytes > 0 {
		t.azureOSDevice(&osd)
		info.Disks = append(info.Disks, osd)
	}
	data := cp.StorageProfile.DataDisks
	if len(data) > maxDisks {
		info.Notes = append(info.Notes, fmt.Sprintf("IMDS lists %d data disks; the first %d are read", len(data), maxDisks))
		data = data[:maxDisks]
	}
	var disks []Disk
	seen := map[int]bool{}
	for i := range data {
		d := azureDiskInfo(o, &data[i], "data", fmt.Sprintf("%sstorageProfile.dataDisks[%d]", src, i))
		if d.LUN != nil {
			if seen[*d.LUN] {
				d.Notes = append(d.Notes, fmt.Sprintf("LUN %d is listed twice in IMDS; no device is tied to it", *d.LUN))
				d.LUN = nil
			} else {
				seen[*d.LUN] = true
			}
		}
		t.azureDataDevice(&d)
		disks = append(disks, d)
	}
	sort.SliceStable(disks, func(a, b int) bool {
		if disks[a].LUN == nil || disks[b].LUN == nil {
			return disks[a].LUN != nil
		}
		return *disks[a].LUN < *disks[b].LUN
	})
	info.Disks = append(info.Disks, disks...)
}

// azureDiskInfo maps one IMDS disk entry.
func azureDiskInfo(o *Options, a *azureDisk, role, src string) Disk {
	d := Disk{Role: role}
	fact := func(k, v, field string) { d.Facts = append(d.Facts, Fact{Key: k, Value: v, Source: src + "." + field}) }
	if n, ok := text(string(a.Name), maxNameLen); ok && n != "" {
		d.Name = n
	}
	if id, ok := text(string(a.ManagedDisk.ID), maxIDLen); ok && id != "" {
		d.ID = id
	}
	if role == "data" {
		switch l, ok := count(string(a.Lun), maxLUN); {
		case ok:
			v := int(l)
			d.LUN = &v
			fact("lun", strconv.Itoa(v), "lun")
		case strings.TrimSpace(string(a.Lun)) != "":
			d.Notes = append(d.Notes, "IMDS gave an unusable LUN; no device is tied to this disk")
		}
	}
	sku, _ := name(string(a.ManagedDisk.StorageAccountType), maxNameLen)
	if sku != "" {
		d.Type = sku
		fact("type", sku, "managedDisk.storageAccountType")
	}
	if s := strings.TrimSpace(string(a.DiskSizeGB)); s != "" {
		if g, ok := count(s, maxDiskGiB); ok && g > 0 {
			d.SizeBytes = g << 30
			fact("size_gib", strconv.FormatInt(g, 10), "diskSizeGB")
		} else {
			d.Notes = append(d.Notes, "IMDS diskSizeGB is not a plausible size; ignored")
		}
	} else if b, ok := count(string(a.DiskCapacityBytes), maxDiskGiB<<30); ok && b > 0 {
		d.SizeBytes = b
		fact("size_bytes", strconv.FormatInt(b, 10), "diskCapacityBytes")
	}
	switch strings.ToLower(strings.TrimSpace(string(a.Caching))) {
	case "none":
		d.Caching = "none"
	case "readonly":
		d.Caching = "readonly"
	case "readwrite":
		d.Caching = "readwrite"
	}
	if d.Caching != "" {
		fact("caching", d.Caching, "caching")
	}
	if s := strings.TrimSpace(string(a.OpsPerSecondThrottle)); s != "" {
		if v, ok := number(s, maxIOPS); ok && v > 0 {
			d.ProvisionedIOPS = v
			fact("provisioned_iops", units.Exact(v), "opsPerSecondThrottle")
		} else {
			d.Notes = append(d.Notes, "IMDS opsPerSecondThrottle is not a plausible IOPS figure; ignored")
		}
	}
	if s := strings.TrimSpace(string(a.BytesPerSecondThrottle)); s != "" {
		if v, ok := number(s, maxBWBytes); ok && v > 0 {
			d.ProvisionedBWBytes = v
			fact("provisioned_bw_bytes", units.Exact(v), "bytesPerSecondThrottle")
		} else {
			d.Notes = append(d.Notes, "IMDS bytesPerSecondThrottle is not a plausible rate; ignored")
		}
	}
	if strings.EqualFold(strings.TrimSpace(string(a.WriteAcceleratorEnabled)), "true") {
		d.Notes = append(d.Notes, "Write Accelerator is enabled on this disk: its writes do not follow the disk's catalog limits")
	}
	switch {
	case strings.EqualFold(strings.TrimSpace(string(a.DiffDiskSettings.Option)), "local"):
		d.Type = "ephemeral"
		d.Notes = append(d.Notes, "an ephemeral OS disk on the VM's local storage: not a managed disk, so the catalog has no disk limits for it")
	case sku == "" && strings.TrimSpace(string(a.Vhd.URI)) != "":
		d.Notes = append(d.Notes, "an unmanaged disk (a VHD in a storage account): the catalog has no limits for it")
	case sku == "":
		d.Notes = append(d.Notes, "IMDS gives no storage type for this disk")
	default:
		spec, notes, why := diskSpec(o.Catalog, azure, sku, gibCeil(d.SizeBytes), d.ProvisionedIOPS, d.ProvisionedBWBytes)
		if spec == "" {
			d.Notes = append(d.Notes, "no catalog spec: "+why)
			break
		}
		d.Spec = spec
		d.Notes = append(d.Notes, notes...)
		if f := o.Catalog.Family(azure, sku); f != nil && f.ID == "azure:premium-ssd" {
			d.Notes = append(d.Notes, "IMDS does not report a performance tier set above the size's own, nor whether on-demand bursting is enabled")
		}
	}
	return d
}

// azureDataDevice ties a data disk to its kernel device: first the udev
// links (waagent's /dev/disk/azure/scsi1/lunN, azure-vm-utils'
// /dev/disk/azure/data/by-lun/N), then sysfs: a SCSI disk whose LUN is
// N on the VMBus SCSI controller Azure attaches data disks to.
func (t tree) azureDataDevice(d *Disk) {
	if d.LUN == nil {
		return
	}
	lun := *d.LUN
	for _, rel := range []string{fmt.Sprintf("disk/azure/scsi1/lun%d", lun), fmt.Sprintf("disk/azure/data/by-lun/%d", lun)} {
		if n, ok := t.link(rel); ok {
			d.Device, d.DeviceHow = n, devLink(rel)+" -> "+n
			t.addSize(d)
			return
		}
	}
	var hits []string
	for _, b := range t.blocks() {
		if !strings.HasPrefix(b, "sd") {
			continue
		}
		hctl, real, ok := t.scsiAddress(b)
		if ok && hctl[3] == int64(lun) && t.vmbusID(real) == azureDataCtrlID {
			hits = append(hits, b)
		}
	}
	switch len(hits) {
	case 1:
		d.Device = hits[0]
		d.DeviceHow = fmt.Sprintf("sysfs: /sys/block/%s is LUN %d on the data-disk SCSI controller %s", hits[0], lun, azureDataCtrlID)
		t.addSize(d)
	case 0:
		d.Notes = append(d.Notes, fmt.Sprintf("no kernel device found for LUN %d (no /dev/disk/azure link, no SCSI disk at that LUN on the data-disk controller)", lun))
	default:
		d.Notes = append(d.Notes, fmt.Sprintf("LUN %d matches several devices (%s); none is tied to it", lun, strings.Join(hits, ", ")))
	}
}

// azureOSDevice ties the OS disk to its device: waagent's
// /dev/disk/azure/root, azure-vm-utils' /dev/disk/azure/os, or the SCSI
// disk on the VMBus controller whose id marks the root disk.
func (t tree) azureOSDevice(d *Disk) {
	for _, rel := range []string{"disk/azure/root", "disk/azure/os"} {
		if n, ok := t.link(rel); ok {
			d.Device, d.DeviceHow = n, devLink(rel)+" -> "+n
			return
		}
	}
	var hits []string
	for _, b := range t.blocks() {
		if !strings.HasPrefix(b, "sd") {
			continue
		}
		if _, real, ok := t.scsiAddress(b); ok {
			if id := t.vmbusID(real); len(id) > 1 && strings.HasPrefix(id[1:], azureRootCtrlPfx) {
				hits = append(hits, b)
			}
		}
	}
	if len(hits) == 1 {
		d.Device = hits[0]
		d.DeviceHow = "sysfs: /sys/block/" + hits[0] + " is on the VMBus controller of the OS disk"
		return
	}
	d.Notes = append(d.Notes, "no kernel device found for the OS disk")
}
