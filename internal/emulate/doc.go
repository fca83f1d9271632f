// Package emulate builds cloud-like disks on a local loop device: a sparse
// file, a loop device with direct IO, an ext4 or xfs file system, and a
// cgroup whose block throttle (v2 io.max, else v1 blkio.throttle.*) caps
// the IO of processes inside it. A controller moves the caps over time to
// emulate credit bursting and a write cache that fills and stalls, and
// writes each state change to an NDJSON event log: the ground truth that
// tests compare iolens's findings against.
//
// Use from tests (as root):
//
//	d, err := emulate.Create(ctx, emulate.Spec{Name: "t1", Dir: t.TempDir(),
//		Limits: emulate.Limits{ReadIOPS: 500, WriteIOPS: 500}})
//	defer d.Destroy(context.WithoutCancel(ctx))
//	cfg := runner.Config{Dir: d.Mount, Emulated: d.Name, CommandPrefix: d.CommandPrefix()}
//	... runner.Run(ctx, cfg, ...) ...
//	evs, err := d.Events() // or ReadEventFile(d.EventLog)
//
// Without Spec.Executable the controller (and the latency layer) run in
// the creating process until Destroy; the CLI starts them as daemons
// instead ("iolens emulate controller NAME", "iolens emulate latency
// NAME"), so a disk outlives the command that made it and Open(name)
// finds it from any process.
//
// Spec.Latency puts a latency layer under the loop device: a FUSE file
// system serving the backing file, where each read, write and flush waits
// out a latency drawn from its distribution before it answers, many at
// once, so QD1 is latency-bound while deep queues still reach the caps.
//
// Every path of a disk derives from the state root and its name, never
// from state.json; nothing is deleted from a directory without the
// marker create writes first, and a daemon is signalled only when /proc
// shows its command line and recorded start time.
//
// What the kernel throttle cannot do: it caps reads and writes apart (a
// cloud cap covers both), and on cgroup v1 it only sees IO a process
// submits itself (direct IO, reads): buffered writes reach the disk from
// the kernel's flusher threads outside the cgroup and are not capped.
package emulate
