package cloudmeta

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/units"
)

// ibmToken is the answer to PUT /instance_identity/v1/token.
type ibmToken struct {
	AccessToken flexString `json:"access_token"`
}

// ibmAttachment is a volume attachment as the instance and the
// volume_attachments list give it. The instance document carries only
// references (id, name); the list adds the device id and the bandwidth
// allocated to the volume. Capacity, profile and IOPS are read when a
// service sends them.
type ibmAttachment struct {
	ID        flexString `json:"id"`
	Name      flexString `json:"name"`
	Type      flexString `json:"type"`
	Bandwidth flexString `json:"bandwidth"`
	Device    struct {
		ID flexString `json:"id"`
	} `json:"device"`
	Volume struct {
		ID       flexString `json:"id"`
		Name     flexString `json:"name"`
		Capacity flexString `json:"capacity"`
		IOPS     flexString `json:"iops"`
		Profile  struct {
			Name flexString `json:"name"`
		} `json:"profile"`
	} `json:"volume"`
}

// ibmInstance is the part of GET /metadata/v1/instance iolens reads.
type ibmInstance struct {
	Profile struct {
		Name flexString `json:"name"`
	} `json:"profile"`
	Zone struct {
		Name flexString `json:"name"`
	} `json:"zone"`
	Bandwidth            flexString      `json:"bandwidth"`
	BootVolumeAttachment ibmAttachment   `json:"boot_volume_attachment"`
	VolumeAttachments    []ibmAttachment `json:"volume_attachments"`
}

type ibmAttachmentList struct {
	VolumeAttachments []ibmAttachment `json:"volume_attachments"`
}

// virtioSerialLen: a virtio-blk serial holds 20 bytes, so the device
// shows the first 20 characters of the attachment's device id.
const virtioSerialLen = 20

func parseIBMToken(b []byte) (string, error) {
	var t ibmToken
	if _, err := decodeJSON("IBM identity token", b, &t); err != nil {
		return "", err
	}
	return parseToken("IBM identity token", []byte(t.AccessToken))
}

func parseIBMInstance(b []byte) (*ibmInstance, []string, error) {
	var d ibmInstance
	skipped, err := decodeJSON("IBM instance metadata", b, &d)
	if err != nil {
		return nil, nil, err
	}
	if _, ok := name(string(d.Profile.Name), maxNameLen); !ok {
		return nil, nil, &parseError{What: "IBM instance metadata", Why: "no usable profile.name"}
	}
	var notes []string
	if skipped != "" {
		notes = append(notes, skipped+"; ignored")
	}
	if len(d.VolumeAttachments) > maxDisks {
		notes = append(notes, fmt.Sprintf("IBM metadata lists %d volume attachments; the first %d are read", len(d.VolumeAttachments), maxDisks))
		d.VolumeAttachments = d.VolumeAttachments[:maxDisks]
	}
	return &d, notes, nil
}

func parseIBMAttachments(b []byte) ([]ibmAttachment, []string, error) {
	var l ibmAttachmentList
	skipped, err := decodeJSON("IBM volume attachments", b, &l)
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	if skipped != "" {
		notes = append(notes, skipped+"; ignored")
	}
	if len(l.VolumeAttachments) > maxDisks {
		l.VolumeAttachments = l.VolumeAttachments[:maxDisks]
	}
	return l.VolumeAttachments, notes, nil
}

func ibmProber(c *client, o *Options) prober {
	tokenURL := o.BaseURL + "/instance_identity/v1/token?version=" + ibmAPIVersion
	return prober{provider: ibm, url: tokenURL, identify: func(ctx context.Context) (func(context.Context, *Info), error) {
		r, err := c.do(ctx, "PUT", tokenURL, map[string]string{"Metadata-Flavor": "ibm", "Content-Type": "application/json"}, []byte(`{"expires_in": 300}`))
		if err != nil {
			return nil, err
		}
		tok, err := parseIBMToken(r.body)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, info *Info) { ibmInfo(ctx, c, o, tok, info) }, nil
	}}
}

func ibmInfo(ctx context.Context, c *client, o *Options, tok string, info *Info) {
	const src = "IBM VPC metadata instance "
	auth := map[string]string{"Authorization": "Bearer " + tok, "Accept": "application/json"}
	r, err := c.do(ctx, "GET", o.BaseURL+"/metadata/v1/instance?version="+ibmAPIVersion, auth, nil)
	if err != nil {
		info.Notes = append(info.Notes, "instance: "+describe(err, o.DialTimeout, o.Timeout))
		return
	}
	inst, notes, err := parseIBMInstance(r.body)
	if err != nil {
		info.Notes = append(info.Notes, "instance: "+err.Error())
		return
	}
	info.Notes = append(info.Notes, notes...)
	prof, _ := name(string(inst.Profile.Name), maxNameLen)
	setVM(o.Catalog, info, prof, src+"profile.name")
	setLocation(info, "", "", string(inst.Zone.Name), src+"zone.name")
	if bw, ok := number(string(inst.Bandwidth), 1e7); ok && bw > 0 {
		info.Facts = append(info.Facts, Fact{Key: "instance_bandwidth_mbps", Value: units.Exact(bw), Source: src + "bandwidth"})
		if v := o.Catalog.VM(info.VM); info.VM != "" && v != nil && v.BandwidthMbps > 0 && v.BandwidthMbps != bw {
			info.Notes = append(info.Notes, fmt.Sprintf("the instance's bandwidth is %s Mbps; the catalog has %s Mbps for %s", units.Exact(bw), units.Exact(v.BandwidthMbps), prof))
		}
	}

	// The list adds device ids; without it the attachment id stands in.
	byID := map[string]*ibmAttachment{}
	if r, err := c.do(ctx, "GET", o.BaseURL+"/metadata/v1/instance/volume_attachments?version="+ibmAPIVersion, auth, nil); err != nil {
		info.Notes = append(info.Notes, "volume attachments: "+describe(err, o.DialTimeout, o.Timeout))
	} else if list, notes, err := parseIBMAttachments(r.body); err != nil {
		info.Notes = append(info.Notes, "volume attachments: "+err.Error())
	} else {
		info.Notes = append(info.Notes, notes...)
		for i := range list {
			if id := string(list[i].ID); id != "" {
				byID[id] = &list[i]
			}
		}
	}
	atts := inst.VolumeAttachments
	bootID := string(inst.BootVolumeAttachment.ID)
	if bootID != "" && !hasAttachment(atts, bootID) {
		atts = append([]ibmAttachment{inst.BootVolumeAttachment}, atts...)
	}
	t := tree{sys: o.SysRoot, dev: o.DevRoot}
	seen := map[string]bool{}
	missing := false
	for i := range atts {
		a := atts[i]
		id := string(a.ID)
		if seen[id] && id != "" {
			continue
		}
		seen[id] = true
		if full, ok := byID[id]; ok {
			a = mergeAttachment(a, *full)
		}
		role := "data"
		if id != "" && id == bootID || strings.EqualFold(string(a.Type), "boot") {
			role = "boot"
		}
		d := ibmDisk(o, t, &a, role, fmt.Sprintf("%svolume_attachments[%d]", src, i))
		if d.Spec == "" {
			missing = true
		}
		info.Disks = append(info.Disks, d)
	}
	if missing {
		info.Notes = append(info.Notes, "a volume's profile and capacity are not in instance metadata: give --expect ibm:PROFILE:SIZE, e.g. --expect ibm:10iops-tier:300GB")
	}
}

func hasAttachment(list []ibmAttachment, id string) bool {
	for _, a := range list {
		if string(a.ID) == id {
			return true
		}
	}
	return false
}

// mergeAttachment fills what the instance's reference lacks from the
// list entry of the same attachment.
func mergeAttachment(ref, full ibmAttachment) ibmAttachment {
	pick := func(a, b flexString) flexString {
		if strings.TrimSpace(string(a)) != "" {
			return a
		}
		return b
	}
	ref.Name = pick(ref.Name, full.Name)
	ref.Type = pick(ref.Type, full.Type)
	ref.Bandwidth = pick(ref.Bandwidth, full.Bandwidth)
	ref.Device.ID = pick(ref.Device.ID, full.Device.ID)
	ref.Volume.ID = pick(ref.Volume.ID, full.Volume.ID)
	ref.Volume.Name = pick(ref.Volume.Name, full.Volume.Name)
	ref.Volume.Capacity = pick(ref.Volume.Capacity, full.Volume.Capacity)
	ref.Volume.IOPS = pick(ref.Volume.IOPS, full.Volume.IOPS)
	ref.Volume.Profile.Name = pick(ref.Volume.Profile.Name, full.Volume.Profile.Name)
	return ref
}

func ibmDisk(o *Options, t tree, a *ibmAttachment, role, src string) Disk {
	d := Disk{Role: role}
	fact := func(k, v, field string) { d.Facts = append(d.Facts, Fact{Key: k, Value: v, Source: src + "." + field}) }
	if n, ok := text(string(a.Volume.Name), maxNameLen); ok && n != "" {
		d.Name = n
		fact("volume_name", n, "volume.name")
	}
	if id, ok := name(string(a.Volume.ID), maxIDLen); ok {
		d.ID = id
		fact("volume_id", id, "volume.id")
	}
	if bw, ok := number(string(a.Bandwidth), 1e7); ok && bw > 0 {
		fact("bandwidth_mbps", units.Exact(bw), "bandwidth")
	}
	prof, _ := name(string(a.Volume.Profile.Name), maxNameLen)
	if prof != "" {
		d.Type = prof
		fact("profile", prof, "volume.profile.name")
	}
	var capGB int64
	if v, ok := count(string(a.Volume.Capacity), maxDiskGiB); ok && v > 0 {
		capGB = v
		fact("capacity_gb", strconv.FormatInt(v, 10), "volume.capacity")
	}
	if v, ok := number(string(a.Volume.IOPS), maxIOPS); ok && v > 0 {
		d.ProvisionedIOPS = v
		fact("provisioned_iops", units.Exact(v), "volume.iops")
	}

	// The device shows the first 20 characters of the attachment's
	// device id as its virtio serial.
	key, how := string(a.Device.ID), "device.id"
	if strings.TrimSpace(key) == "" {
		key, how = string(a.ID), "attachment id (no device id in the metadata)"
	}
	if len(key) > virtioSerialLen {
		key = key[:virtioSerialLen]
	}
	if k, ok := name(key, virtioSerialLen); ok {
		rel := "disk/by-id/virtio-" + k
		if n, ok := t.link(rel); ok {
			d.Device, d.DeviceHow = n, devLink(rel)+" -> "+n+" (from the "+how+")"
		} else {
			for _, b := range t.blocks() {
				if strings.HasPrefix(b, "vd") && t.attr("block", b, "serial") == k {
					d.Device, d.DeviceHow = b, "virtio serial "+k+" in /sys/block/"+b+"/serial (from the "+how+")"
					break
				}
			}
		}
		if d.Device == "" {
			d.Notes = append(d.Notes, "no virtio device with serial "+k+": no kernel device tied to this volume")
		}
	} else {
		d.Notes = append(d.Notes, "the metadata gives no usable attachment or device id: no kernel device tied to this volume")
	}
	t.addSize(&d)
	if prof != "" && capGB > 0 {
		spec, notes, why := diskSpec(o.Catalog, ibm, prof, capGB, d.ProvisionedIOPS, 0)
		if spec != "" {
			d.Spec = spec
			d.Notes = append(d.Notes, notes...)
		} else {
			d.Notes = append(d.Notes, "no catalog spec: "+why)
		}
	}
	return d
}
