package cloudmeta

import (
	"context"
	"sort"
	"strconv"
	"strings"
)

// awsIdentity is the part of the instance identity document
// (GET /latest/dynamic/instance-identity/document) iolens reads. The
// document also holds the account id and private IP; they are not kept.
type awsIdentity struct {
	InstanceType     flexString `json:"instanceType"`
	Region           flexString `json:"region"`
	AvailabilityZone flexString `json:"availabilityZone"`
}

// ebsModel and instanceStoreModel are the NVMe model strings of EBS
// volumes and instance store disks.
const (
	ebsModel           = "Amazon Elastic Block Store"
	instanceStoreModel = "Amazon EC2 NVMe Instance Storage"
)

// parseToken reads a session token: 1 to 8 KiB of visible ASCII, since it
// goes back into a request header.
func parseToken(what string, b []byte) (string, error) {
	s := strings.TrimSpace(string(b))
	if s == "" || len(s) > 8192 {
		return "", &parseError{What: what, Why: "empty or over 8 KiB"}
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return "", &parseError{What: what, Why: "not a printable token"}
		}
	}
	return s, nil
}

// parseAWSIdentity reads an instance identity document.
func parseAWSIdentity(b []byte) (*awsIdentity, []string, error) {
	var d awsIdentity
	skipped, err := decodeJSON("AWS instance identity document", b, &d)
	if err != nil {
		return nil, nil, err
	}
	if _, ok := name(string(d.InstanceType), maxNameLen); !ok {
		return nil, nil, &parseError{What: "AWS instance identity document", Why: "no usable instanceType"}
	}
	var notes []string
	if skipped != "" {
		notes = append(notes, skipped+"; ignored")
	}
	return &d, notes, nil
}

func awsProber(c *client, o *Options) prober {
	tokenURL := o.BaseURL + "/latest/api/token"
	docURL := o.BaseURL + "/latest/dynamic/instance-identity/document"
	return prober{provider: aws, url: tokenURL, identify: func(ctx context.Context) (func(context.Context, *Info), error) {
		// IMDSv2: a PUT for a session token, then GETs that carry it.
		r, err := c.do(ctx, "PUT", tokenURL, map[string]string{"X-aws-ec2-metadata-token-ttl-seconds": "60"}, nil)
		if err != nil {
			return nil, err
		}
		tok, err := parseToken("AWS IMDSv2 token", r.body)
		if err != nil {
			return nil, err
		}
		r, err = c.do(ctx, "GET", docURL, map[string]string{"X-aws-ec2-metadata-token": tok}, nil)
		if err != nil {
			return nil, err
		}
		doc, notes, err := parseAWSIdentity(r.body)
		if err != nil {
			return nil, err
		}
		return func(_ context.Context, info *Info) {
			info.Notes = append(info.Notes, notes...)
			awsInfo(o, doc, info)
		}, nil
	}}
}

func awsInfo(o *Options, doc *awsIdentity, info *Info) {
	const src = "AWS IMDSv2 instance-identity document "
	size, _ := name(string(doc.InstanceType), maxNameLen)
	setVM(o.Catalog, info, size, src+"instanceType")
	setLocation(info, string(doc.Region), src+"region", string(doc.AvailabilityZone), src+"availabilityZone")
	t := tree{sys: o.SysRoot, dev: o.DevRoot}
	info.Disks = t.awsNVMe()
	ebs := 0
	for _, d := range info.Disks {
		if d.Role == "ebs" {
			ebs++
		}
	}
	if ebs == 0 {
		info.Notes = append(info.Notes, "no EBS NVMe device in sysfs: on Xen instances EBS volumes appear as /dev/xvd* with no volume id, so iolens cannot tell them apart")
	}
	info.Notes = append(info.Notes, "an EBS volume's type, size tier and provisioned IOPS and throughput are not in instance metadata (only the EC2 API has them, and iolens uses no credentials): give --expect aws:TYPE:SIZE[:iops=N,throughput=M], e.g. --expect aws:gp3:100GiB")
}

// awsNVMe lists the NVMe namespaces the kernel shows, with the EBS volume
// id an EBS namespace carries as its controller serial ("vol0abc...",
// the volume id without its dash).
func (t tree) awsNVMe() []Disk {
	var out []Disk
	for _, b := range t.blocks() {
		if !isNVMeNamespace(b) {
			continue
		}
		model := t.attr("block", b, "device", "model")
		serial := t.attr("block", b, "device", "serial")
		src := "sysfs /sys/block/" + b + "/device/"
		switch model {
		case ebsModel:
			d := Disk{Role: "ebs", Device: b}
			if id, ok := ebsVolumeID(serial); ok {
				d.ID = id
				d.DeviceHow = "NVMe serial " + serial + " in /sys/block/" + b + "/device/serial is " + id
				d.Facts = append(d.Facts, Fact{Key: "volume_id", Value: id, Source: src + "serial"})
			} else {
				d.DeviceHow = "NVMe model " + ebsModel + " in /sys/block/" + b + "/device/model"
				d.Notes = append(d.Notes, "its NVMe serial is not an EBS volume id")
			}
			t.addSize(&d)
			size := "SIZE"
			if d.SizeBytes > 0 {
				size = strconv.FormatInt(gibCeil(d.SizeBytes), 10) + "GiB"
			}
			d.Notes = append(d.Notes, "its type and provisioned figures are not in instance metadata: give --expect aws:TYPE:"+size+"[:iops=N,throughput=M] (TYPE gp3, gp2, io2, st1...)")
			out = append(out, d)
		case instanceStoreModel:
			d := Disk{Role: "instance-store", Type: "instance-store", Device: b,
				DeviceHow: "NVMe model " + instanceStoreModel + " in /sys/block/" + b + "/device/model"}
			t.addSize(&d)
			d.Notes = append(d.Notes, "an instance store disk on the host: the catalog has no limits for it")
			out = append(out, d)
		}
	}
	sort.Slice(out, func(a, b int) bool {
		x, y := out[a].Device, out[b].Device
		return len(x) < len(y) || len(x) == len(y) && x < y
	})
	return out
}

func isNVMeNamespace(s string) bool {
	rest, ok := strings.CutPrefix(s, "nvme")
	if !ok {
		return false
	}
	c, n, ok := strings.Cut(rest, "n")
	if !ok || strings.Contains(n, "p") {
		return false
	}
	_, ok1 := count(c, 1<<20)
	_, ok2 := count(n, 1<<20)
	return ok1 && ok2
}

// ebsVolumeID turns an EBS NVMe serial ("vol0abc123...") into the volume
// id ("vol-0abc123...").
func ebsVolumeID(serial string) (string, bool) {
	hex, ok := strings.CutPrefix(serial, "vol")
	hex = strings.TrimPrefix(hex, "-")
	if !ok || len(hex) < 8 || len(hex) > 32 {
		return "", false
	}
	for i := 0; i < len(hex); i++ {
		c := hex[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", false
		}
	}
	return "vol-" + hex, true
}
