package k8s

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/limits"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ClassInfo is what matters about a storage class for performance.
type ClassInfo struct {
	Name              string            `json:"name"`
	Provisioner       string            `json:"provisioner"`
	Default           bool              `json:"default"`
	VolumeBindingMode string            `json:"volume_binding_mode"`
	ReclaimPolicy     string            `json:"reclaim_policy"`
	AllowExpansion    bool              `json:"allow_volume_expansion"`
	Important         map[string]string `json:"important_parameters"`
	Parameters        map[string]string `json:"parameters"`
	// SKU is the limits catalog entry the class maps to, when known.
	SKU string `json:"sku,omitempty"`
}

// SKUResolver maps a class to a limits-catalog SKU. The limits package
// provides one; without it SKU stays empty.
type SKUResolver func(provisioner string, parameters map[string]string) (sku string, ok bool)

// CatalogDiskAt resolves a class to the limits catalog disk it
// provisions at size.
func CatalogDiskAt(size resource.Quantity) SKUResolver {
	return func(provisioner string, params map[string]string) (string, bool) {
		return limits.FromStorageClass(provisioner, params, size.Value())
	}
}

// importantKeys are the parameters that decide a volume's performance
// (disk type, caching, provisioned IOPS and throughput) on the common
// provisioners.
var importantKeys = []string{
	"skuname", "storageaccounttype", "cachingmode", "type", "iops", "iopspergb",
	"throughput", "diskiopsreadwrite", "diskmbpsreadwrite", "provisioned-iops-on-create",
	"provisioned-throughput-on-create", "replication-type", "profile", "tier", "performancetier",
	"csi.storage.k8s.io/fstype", "fstype", "encrypted", "blocksize",
}

func importantParam(k string) bool {
	lk := strings.ToLower(k)
	for _, ik := range importantKeys {
		if lk == ik {
			return true
		}
	}
	return false
}

// Classes lists the cluster's storage classes, sorted by name.
func Classes(ctx context.Context, cs kubernetes.Interface, sku SKUResolver) ([]ClassInfo, error) {
	list, err := cs.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing storage classes: %w", err)
	}
	out := make([]ClassInfo, 0, len(list.Items))
	for _, sc := range list.Items {
		out = append(out, classInfo(&sc, sku))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func classInfo(sc *storagev1.StorageClass, sku SKUResolver) ClassInfo {
	ci := ClassInfo{Name: sc.Name, Provisioner: sc.Provisioner, Important: map[string]string{}, Parameters: map[string]string{},
		VolumeBindingMode: "Immediate", ReclaimPolicy: "Delete"}
	for _, k := range []string{"storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"} {
		if sc.Annotations[k] == "true" {
			ci.Default = true
		}
	}
	if sc.VolumeBindingMode != nil {
		ci.VolumeBindingMode = string(*sc.VolumeBindingMode)
	}
	if sc.ReclaimPolicy != nil {
		ci.ReclaimPolicy = string(*sc.ReclaimPolicy)
	}
	if sc.AllowVolumeExpansion != nil {
		ci.AllowExpansion = *sc.AllowVolumeExpansion
	}
	for k, v := range sc.Parameters {
		ci.Parameters[k] = v
		if importantParam(k) {
			ci.Important[k] = v
		}
	}
	if sku != nil {
		if s, ok := sku(sc.Provisioner, sc.Parameters); ok {
			ci.SKU = s
		}
	}
	return ci
}
