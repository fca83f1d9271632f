package limits

import (
	"math"
	"strconv"
	"strings"
)

// FromStorageClass maps a Kubernetes StorageClass (its provisioner and
// parameters) and a requested size in bytes to a catalog disk spec, for
// example ("disk.csi.azure.com", {skuName: Premium_LRS}, 250 GiB) to
// "azure:premium-ssd:250GiB". ok is false when the class is not one the
// catalog knows (another provisioner, an unknown SKU, a size out of
// range). Parameter names are matched case-insensitively, as the drivers
// do; missing ones take the driver's default.
func FromStorageClass(provisioner string, params map[string]string, size int64) (spec string, ok bool) {
	c, err := Default()
	if err != nil || size <= 0 {
		return "", false
	}
	p := map[string]string{}
	for k, v := range params {
		p[strings.ToLower(k)] = strings.TrimSpace(v)
	}
	gibs := strconv.FormatFloat(math.Ceil(float64(size)/gib-1e-9), 'f', -1, 64) + "GiB"
	var kv []string
	addKV := func(k, v string) {
		if v != "" {
			kv = append(kv, k+"="+v)
		}
	}
	switch provisioner {
	case "disk.csi.azure.com", "kubernetes.io/azure-disk":
		sku := first(p, "skuname", "storageaccounttype")
		if sku == "" {
			sku = "StandardSSD_LRS"
		}
		switch strings.ToLower(sku) {
		case "premium_lrs", "premium_zrs":
			spec = "azure:premium-ssd:" + gibs
		case "standardssd_lrs", "standardssd_zrs":
			spec = "azure:standard-ssd:" + gibs
		case "standard_lrs":
			spec = "azure:standard-hdd:" + gibs
		case "premiumv2_lrs", "premiumv2_zrs":
			spec = "azure:premium-ssd-v2:" + gibs
			addKV("iops", p["diskiopsreadwrite"])
			addKV("throughput", p["diskmbpsreadwrite"])
		case "ultrassd_lrs":
			spec = "azure:ultra:" + gibs
			addKV("iops", p["diskiopsreadwrite"])
			addKV("throughput", p["diskmbpsreadwrite"])
		default:
			return "", false
		}
	case "file.csi.azure.com", "kubernetes.io/azure-file":
		sku := first(p, "skuname", "storageaccounttype")
		if strings.HasPrefix(strings.ToLower(sku), "premium") {
			spec = "azure:files-premium:" + gibs
		} else {
			spec = "azure:files-standard:" + gibs
		}
	case "ebs.csi.aws.com", "kubernetes.io/aws-ebs":
		t := strings.ToLower(p["type"])
		if t == "" {
			t = "gp3"
			if provisioner == "kubernetes.io/aws-ebs" {
				t = "gp2"
			}
		}
		spec = "aws:" + t + ":" + gibs
		iops := first(p, "iops", "iopspergb")
		if p["iopspergb"] != "" && p["iops"] == "" {
			per, err := strconv.ParseFloat(iops, 64)
			if err != nil {
				return "", false
			}
			iops = strconv.FormatFloat(per*math.Ceil(float64(size)/gib-1e-9), 'f', -1, 64)
		}
		addKV("iops", iops)
		addKV("throughput", p["throughput"])
	case "pd.csi.storage.gke.io", "kubernetes.io/gce-pd":
		t := strings.ToLower(p["type"])
		if t == "" {
			t = "pd-standard"
		}
		spec = "gcp:" + t + ":" + gibs
		addKV("iops", p["provisioned-iops-on-create"])
		if tp := p["provisioned-throughput-on-create"]; tp != "" {
			addKV("throughput", strings.TrimSuffix(tp, "Mi"))
		}
	case "filestore.csi.storage.gke.io":
		// Only the zonal tier (1 to 9.75 TiB) is in the catalog.
		if !strings.EqualFold(p["tier"], "zonal") {
			return "", false
		}
		spec = "gcp:filestore-zonal:" + gibs
	case "vpc.file.csi.ibm.io":
		switch prof := strings.ToLower(p["profile"]); prof {
		case "", "dp2":
			spec = "ibm:file-dp2:" + gibs
			addKV("iops", p["iops"])
		case "rfs":
			spec = "ibm:file-regional:" + gibs
		default:
			return "", false
		}
	case "vpc.block.csi.ibm.io":
		prof := strings.ToLower(p["profile"])
		if prof == "" {
			prof = "10iops-tier"
		}
		spec = "ibm:" + prof + ":" + gibs
		addKV("iops", p["iops"])
		addKV("throughput", p["throughput"])
	default:
		return "", false
	}
	if len(kv) > 0 {
		spec += ":" + strings.Join(kv, ",")
	}
	d, err := c.ParseDisk(spec)
	if err != nil {
		return "", false
	}
	return d.Spec, true
}

// StorageClassCache is the Azure host cache mode a StorageClass asks for
// (the CSI driver's default is ReadOnly); "" for other provisioners.
func StorageClassCache(provisioner string, params map[string]string) string {
	switch provisioner {
	case "disk.csi.azure.com", "kubernetes.io/azure-disk":
	default:
		return ""
	}
	for k, v := range params {
		if strings.EqualFold(k, "cachingmode") {
			switch strings.ToLower(v) {
			case "none":
				return CacheNone
			case "readwrite":
				return CacheReadWrite
			}
			return CacheReadOnly
		}
	}
	return CacheReadOnly
}

func first(p map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := p[k]; v != "" {
			return v
		}
	}
	return ""
}
