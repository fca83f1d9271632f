// Package cloudmeta asks the instance metadata service of the cloud VM
// iolens runs on (Azure IMDS, AWS IMDSv2, Google Compute Engine, IBM Cloud
// VPC) what the VM is and which disks it has, maps that onto the limits
// catalog's names (a VM id such as "azure:Standard_D8s_v3", a disk spec
// such as "azure:P20", only when the catalog accepts it) and says where
// each fact came from.
//
// Detect probes the providers concurrently with short timeouts, keeps the
// first that answers and returns "no cloud" (never an error) when none
// does; every answer is size-capped and parsed defensively. Each disk is
// tied to its kernel device through udev links and sysfs (Azure LUN, EBS
// NVMe serial, GCP device name, IBM virtio serial); when that cannot be
// done, Disk.Device stays empty with a note, and Info.ExpectFor gives the
// VM alone. What the metadata cannot say (an EBS volume's type, an IBM
// volume's profile, a Premium SSD v2's provisioned IOPS) is a note with
// the --expect to give instead, never a guess.
package cloudmeta
