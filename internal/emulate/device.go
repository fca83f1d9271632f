package emulate

import (
	"math/rand/v2"
	"sync"
	"time"
)

// The device is what the latency layer emulates inside the disk, below
// the loop device: a throttle (token buckets, as a hypervisor paces a
// cloud disk's IO), then a number of channels that each serve one IO at a
// time for its drawn latency. It keeps its own clock of when each bucket
// admits the next IO and when each channel is free, and tells each IO
// when to answer. IOs therefore wait their turn in virtual time, not in a
// queue of goroutines: a request whose thread wakes late does not push
// back the ones after it, so the rates hold on a loaded machine too.

// ioKind is what a request asks of the device.
type ioKind int

const (
	ioRead ioKind = iota
	ioWrite
	ioFlush
)

// throttleTolerance is how far behind its schedule a bucket may fall and
// still admit IOs at once: it absorbs a host's scheduling hiccup (the
// IOs that should have come meanwhile come late), at the cost of a burst
// of that many milliseconds' worth of IO after an idle spell.
const throttleTolerance = 5 * time.Millisecond

// pacer is one token bucket of the throttle, in the form of the time its
// next IO is due (the generic cell rate algorithm): an IO is admitted at
// max(its arrival, due - tolerance), and moves due on by its cost.
type pacer struct {
	read, write bool    // which IOs count against it
	bytes       bool    // it counts bytes, else IOs
	rate        float64 // per second
	due         time.Time
}

func (p *pacer) counts(k ioKind) bool {
	return k == ioRead && p.read || k == ioWrite && p.write
}

func (p *pacer) cost(size int) time.Duration {
	n := 1.0
	if p.bytes {
		n = float64(size)
	}
	return time.Duration(n / p.rate * float64(time.Second))
}

type device struct {
	mu      sync.Mutex
	rng     *rand.Rand
	lat     Latency
	buckets []*pacer
	// free is when each channel is free; nil when the device serves any
	// number of IOs at once.
	free []time.Time
	// growth is Spec.QueueGrowth; held the answer times of the IOs in
	// the device, kept only with a growth.
	growth float64
	held   []time.Time
}

// newDevice builds the device: latencies lat, the throttle's caps l (none
// when the throttle is elsewhere) and channels (0: no limit).
func newDevice(lat Latency, l Limits, channels int, rng *rand.Rand) *device {
	d := &device{rng: rng, lat: lat}
	for _, b := range []pacer{
		{read: true, rate: l.ReadIOPS}, {write: true, rate: l.WriteIOPS},
		{read: true, bytes: true, rate: l.ReadBPS}, {write: true, bytes: true, rate: l.WriteBPS},
		{read: true, write: true, rate: l.TotalIOPS}, {read: true, write: true, bytes: true, rate: l.TotalBPS},
	} {
		if b.rate > 0 {
			d.buckets = append(d.buckets, &b)
		}
	}
	if channels > 0 {
		d.free = make([]time.Time, channels)
	}
	return d
}

func (d *device) dist(k ioKind) Dist {
	switch k {
	case ioRead:
		return d.lat.Read
	case ioWrite:
		return d.lat.Write
	}
	return d.lat.Flush
}

// schedule says when to answer an IO of kind k and size bytes that
// reached the layer at arrival: it passes the throttle, waits for a
// channel, and is served for a latency drawn from its distribution. An IO
// that waited for neither answers early by up to early (the part of the
// FUSE round trip every IO pays on top), so that what the application
// sees is its latency, never less; one that waited answers on time, so a
// saturated device serves exactly its channels per latency. A flush
// passes neither throttle nor channels: it waits out its own latency.
func (d *device) schedule(k ioKind, size int, arrival time.Time, early time.Duration) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	lat := d.dist(k).Sample(d.rng)
	start := arrival
	if k == ioFlush {
		return start.Add(lat - min(early, lat))
	}
	for _, b := range d.buckets {
		if b.counts(k) {
			if t := b.due.Add(-throttleTolerance); t.After(start) {
				start = t
			}
		}
	}
	for _, b := range d.buckets {
		if b.counts(k) {
			if b.due.Before(start) {
				b.due = start
			}
			b.due = b.due.Add(b.cost(size))
		}
	}
	if d.growth > 0 {
		// The IOs still in the device when this one arrives slow it.
		n := 0
		for _, t := range d.held {
			if t.After(arrival) {
				d.held[n] = t
				n++
			}
		}
		d.held = d.held[:n]
		lat = time.Duration(float64(lat) * (1 + d.growth*float64(n)))
	}
	ch := -1
	if d.free != nil {
		ch = 0
		for i, f := range d.free {
			if f.Before(d.free[ch]) {
				ch = i
			}
		}
		if d.free[ch].After(start) {
			start = d.free[ch]
		}
	}
	done := start.Add(lat)
	if start.Equal(arrival) {
		done = done.Add(-min(early, lat))
	}
	if ch >= 0 {
		d.free[ch] = done
	}
	if d.growth > 0 {
		d.held = append(d.held, done)
	}
	return done
}
