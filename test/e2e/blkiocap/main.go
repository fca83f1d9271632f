// Command blkiocap adds a block IO throttle to an OCI runtime spec:
//
//	blkiocap config.json "MAJ:MIN IOPS"
//
// The e2e cluster's runc wrapper calls it before each container is created,
// so that the limit sits on the container's own cgroup (cgroup v1
// blk-throttle is not hierarchical: a limit on kubepods would not apply).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "blkiocap:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: blkiocap config.json 'MAJ:MIN IOPS'")
	}
	f := strings.Fields(args[1])
	if len(f) != 2 {
		return fmt.Errorf("cap %q: want 'MAJ:MIN IOPS'", args[1])
	}
	majS, minS, ok := strings.Cut(f[0], ":")
	maj, err1 := strconv.ParseInt(majS, 10, 64)
	min, err2 := strconv.ParseInt(minS, 10, 64)
	rate, err3 := strconv.ParseUint(f[1], 10, 64)
	if !ok || err1 != nil || err2 != nil || err3 != nil {
		return fmt.Errorf("cap %q: want 'MAJ:MIN IOPS'", args[1])
	}
	b, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	// A generic map keeps every field of the spec as it was.
	var spec map[string]any
	if err := json.Unmarshal(b, &spec); err != nil {
		return err
	}
	linux, _ := spec["linux"].(map[string]any)
	if linux == nil {
		return nil
	}
	res, _ := linux["resources"].(map[string]any)
	if res == nil {
		res = map[string]any{}
		linux["resources"] = res
	}
	bio, _ := res["blockIO"].(map[string]any)
	if bio == nil {
		bio = map[string]any{}
		res["blockIO"] = bio
	}
	dev := []any{map[string]any{"major": maj, "minor": min, "rate": rate}}
	bio["throttleReadIOPSDevice"] = dev
	bio["throttleWriteIOPSDevice"] = dev
	out, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	return os.WriteFile(args[0], out, 0o644)
}
