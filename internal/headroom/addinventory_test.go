package headroom

import "testing"

// What the cluster says comes after what the user said: its rules after
// theirs, and a VM size the user gave an instance stands.
func TestOptionsAddInventory(t *testing.T) {
	o := Options{Rules: []Rule{{Claim: "user"}}, VMs: map[string]string{"n1:9100": "user-vm"}}
	o.Add(&Inventory{Rules: []Rule{{Claim: "cluster"}}, VMs: map[string]string{"n1:9100": "cluster-vm", "n2:9100": "other-vm"}})
	if len(o.Rules) != 2 || o.Rules[0].Claim != "user" || o.Rules[1].Claim != "cluster" {
		t.Errorf("rules %+v", o.Rules)
	}
	if o.VMs["n1:9100"] != "user-vm" || o.VMs["n2:9100"] != "other-vm" {
		t.Errorf("VMs %v", o.VMs)
	}
	var empty Options
	empty.Add(&Inventory{VMs: map[string]string{"n3:9100": "vm"}})
	if empty.VMs["n3:9100"] != "vm" {
		t.Errorf("VMs of options with none: %v", empty.VMs)
	}
}
