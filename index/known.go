package index

import "slices"

// knownMax bounds how many bottles' block lists are cached: the daemon
// renders a few sessions at a time, and a big bottle's list is a few
// hundred kilobytes.
const knownMax = 16

// known caches the indexed blocks of the bottles this process updated
// last, so that the next update of a growing bottle does not read them
// back from the database. The cache is only trusted while no other
// connection has written to the database (SQLite's data_version says).
// Guarded by Index.mu.
type known struct {
	version int64 // data_version when the lists were taken; -1 none
	lists   map[int64]map[int64][]doc
	order   []int64 // bottle ids, least recently updated first
}

// get returns the cached block list of bottle id, if it can be trusted:
// version is the database's data_version read inside the write
// transaction, which no other connection can then change.
func (k *known) get(version, id int64) (map[int64][]doc, bool) {
	if version != k.version {
		k.reset()
		k.version = version
		return nil, false
	}
	have, ok := k.lists[id]
	return have, ok
}

// forget drops bottle id's list.
func (k *known) forget(id int64) {
	if _, ok := k.lists[id]; ok {
		delete(k.lists, id)
		k.order = slices.DeleteFunc(k.order, func(o int64) bool { return o == id })
	}
}

// put caches the block list bottle id has after this update.
func (k *known) put(id int64, list map[int64][]doc) {
	if k.lists == nil {
		k.lists = map[int64]map[int64][]doc{}
	}
	if _, ok := k.lists[id]; !ok {
		k.order = append(k.order, id)
	}
	k.lists[id] = list
	for len(k.order) > knownMax {
		delete(k.lists, k.order[0])
		k.order = k.order[1:]
	}
}

func (k *known) reset() {
	k.lists, k.order, k.version = nil, nil, -1
}
