package source

import (
	"crypto/sha256"
	"sync"

	"github.com/go-sourcemap/sourcemap"
)

// transformCache keeps recent TypeScript transforms by content: agents send
// the same helper modules, and often the same programs, run after run, and
// each transform costs far more than the run it serves. It holds at most
// cacheSize entries in two generations: when the young one is full it
// becomes the old one and the previous old one is dropped.
type transformCache struct {
	mu         sync.Mutex
	young, old map[[32]byte]transformed
	// flights are the transforms under way, closed when done: a transform
	// of the same source waits for one rather than doing it again.
	flights map[[32]byte]chan struct{}
}

type transformed struct {
	code string
	smap *sourcemap.Consumer
}

const cacheSize = 256

var transforms = &transformCache{young: map[[32]byte]transformed{}}

func cacheKey(display, src string) [32]byte {
	h := sha256.New()
	h.Write([]byte(display))
	h.Write([]byte{0})
	h.Write([]byte(src))
	var k [32]byte
	h.Sum(k[:0])
	return k
}

func (c *transformCache) get(k [32]byte) (transformed, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.young[k]; ok {
		return t, true
	}
	if t, ok := c.old[k]; ok {
		c.put(k, t)
		return t, true
	}
	return transformed{}, false
}

// has reports whether the cache holds k, as get does.
func (c *transformCache) has(k [32]byte) bool {
	_, ok := c.get(k)
	return ok
}

// fly returns the flight of key k and whether the caller started it (and
// must land it), or an existing one to wait for, or, when the cache has k
// already, a flight that has landed: a transform never starts for a key
// the cache has, whatever landed since the caller's get.
func (c *transformCache) fly(k [32]byte) (chan struct{}, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.flights[k]; ok {
		return ch, false
	}
	_, young := c.young[k]
	_, old := c.old[k]
	if young || old {
		return landed, false
	}
	if c.flights == nil {
		c.flights = map[[32]byte]chan struct{}{}
	}
	ch := make(chan struct{})
	c.flights[k] = ch
	return ch, true
}

// landed is a flight that has landed.
var landed = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// land ends the flight of key k.
func (c *transformCache) land(k [32]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.flights[k])
	delete(c.flights, k)
}

func (c *transformCache) add(k [32]byte, t transformed) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.put(k, t)
}

func (c *transformCache) put(k [32]byte, t transformed) {
	if len(c.young) >= cacheSize/2 {
		c.old, c.young = c.young, make(map[[32]byte]transformed, cacheSize/2)
	}
	c.young[k] = t
}
