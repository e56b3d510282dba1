package view

import (
	"container/list"
	"hash/maphash"
	"sync"
)

// renderCache keeps messages rendered to HTML, by their text, so that a
// page shown again, or a live page fetched again after its bottle grew by
// a turn, renders only what is new: goldmark takes most of a page's time
// (a 2 MB bottle's page: about a third of a second of CPU cold).
//
// Keys are a 64-bit hash of the text (maphash, seeded per process) with
// its length and speaker; values are what the text renders to, anchors
// relative to its start (rendered).
type renderCache struct {
	mu    sync.Mutex // guards all below
	seed  maphash.Seed
	max   int // bytes of HTML kept at most
	size  int
	order *list.List // of *cacheEntry, most recently used first
	byKey map[cacheKey]*list.Element
}

// renderCacheBytes bounds the cache: the HTML of a few dozen big
// sessions (a 2 MB bottle's is about 5 MB).
const renderCacheBytes = 64 << 20

type cacheKey struct {
	sum  uint64
	n    int
	user bool
}

type cacheEntry struct {
	key cacheKey
	r   *rendered
}

func newRenderCache(max int) *renderCache {
	return &renderCache{seed: maphash.MakeSeed(), max: max, order: list.New(), byKey: map[cacheKey]*list.Element{}}
}

// get renders src through m, or returns what it rendered to before.
func (c *renderCache) get(m *markdown, src []byte, user bool) (*rendered, error) {
	key := cacheKey{maphash.Bytes(c.seed, src), len(src), user}
	c.mu.Lock()
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e)
		c.mu.Unlock()
		return e.Value.(*cacheEntry).r, nil
	}
	c.mu.Unlock()
	r, err := m.render(src, user)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; ok || r.size > c.max {
		return r, nil
	}
	c.byKey[key] = c.order.PushFront(&cacheEntry{key, r})
	c.size += r.size
	for c.size > c.max {
		e := c.order.Back()
		c.order.Remove(e)
		old := e.Value.(*cacheEntry)
		delete(c.byKey, old.key)
		c.size -= old.r.size
	}
	return r, nil
}
