package index

import (
	"slices"
	"unsafe"

	"github.com/bottled-dev/bottled/render"
)

// Bounds of the cache of recently updated bottles.
const (
	// knownMax bounds how many bottles are cached: the daemon renders a
	// few sessions at a time.
	knownMax = 16
	// knownBytesMax bounds the memory they hold, the newest bottle's
	// always kept: a bottle is kept in some 120 bytes a block (parsed,
	// and its row with its checksum), 0.43 MB for the 3,600 blocks of a
	// 100 MB session's (2.6 MB), so that only bottles of half a million
	// blocks and more crowd each other out.
	knownBytesMax = 64 << 20
)

// indexed is what the cache keeps of a bottle as its last update (by
// Put) indexed it: its parse, which the next update reads the bottle that
// replaces it from (render.Reparse), and the rows of its blocks, by
// position, with their checksums.
type indexed struct {
	docs   []doc // docs[i] is the row of block i (docs[i].seq == i)
	parsed *render.Parsed
}

// size estimates the memory an indexed bottle holds.
func (x *indexed) size() int64 {
	return int64(cap(x.docs))*int64(unsafe.Sizeof(doc{})) + int64(cap(x.parsed.Blocks))*int64(unsafe.Sizeof(render.Block{}))
}

// known caches the bottles this process updated last, so that the next
// update of a growing bottle neither reads its rows back from the
// database nor parses and checksums again the blocks it had. The rows
// are only trusted while no other connection has written to the database
// (SQLite's data_version says); a bottle's entry is taken out of the
// cache by the update that uses it, or dropped by any other that changes
// its rows, and put back once the update has committed. Guarded by
// Index.mu.
type known struct {
	version int64 // data_version when the entries were taken; -1 none
	lists   map[int64]*indexed
	order   []int64 // bottle ids, least recently updated first
	bytes   int64   // what the entries hold (indexed.size)
}

// check drops every entry if another connection wrote to the database
// since they were taken: version is the database's data_version read
// inside the write transaction, which no other connection can then
// change.
func (k *known) check(version int64) {
	if version != k.version {
		k.reset()
		k.version = version
	}
}

// take returns the cached entry of bottle id (nil if none) and drops it
// from the cache. Called after check, in the same transaction.
func (k *known) take(id int64) *indexed {
	x := k.lists[id]
	k.forget(id)
	return x
}

// forget drops bottle id's entry.
func (k *known) forget(id int64) {
	if x, ok := k.lists[id]; ok {
		k.bytes -= x.size()
		delete(k.lists, id)
		k.order = slices.DeleteFunc(k.order, func(o int64) bool { return o == id })
	}
}

// put caches the entry bottle id has after this update.
func (k *known) put(id int64, x *indexed) {
	k.forget(id)
	if k.lists == nil {
		k.lists = map[int64]*indexed{}
	}
	k.order = append(k.order, id)
	k.lists[id] = x
	k.bytes += x.size()
	for len(k.order) > knownMax || len(k.order) > 1 && k.bytes > knownBytesMax {
		k.forget(k.order[0])
	}
}

func (k *known) reset() {
	k.lists, k.order, k.version, k.bytes = nil, nil, -1, 0
}
