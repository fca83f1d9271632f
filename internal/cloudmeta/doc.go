// Package cloudmeta asks the instance metadata service of the cloud VM
// iolens runs on (Azure IMDS, AWS IMDSv2, Google Compute Engine, IBM Cloud
// VPC) what the VM is and which disks it has, maps what it learns onto the
// limits catalog's names (a VM id such as "azure:Standard_D8s_v3", a disk
// spec such as "azure:P20") and finds each disk's kernel device through
// the sys and dev trees, so a caller can compare a measurement with the
// disk the tested directory lives on, saying where each fact came from.
//
// Detect probes the providers concurrently with short timeouts, keeps the
// first that answers and returns "no cloud" (never an error) when none
// does; every response is size-capped and parsed defensively. What the
// metadata cannot say (an EBS volume's type, an IBM volume's profile, a
// Premium SSD v2's provisioned IOPS) is reported as a note, never guessed.
package cloudmeta
