package index

import (
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/safefile"
)

// watcher notes which bottles change, so that a long-lived reader (the MCP
// server) syncs only those before a query instead of looking at every
// bottle. Events are hints: what changed is read from disk. Its goroutine
// is owned by the Index and stopped by Close.
type watcher struct {
	fw   *fsnotify.Watcher
	done chan struct{}

	// mu guards names and all.
	mu    sync.Mutex
	names map[string]bool
	all   bool // events were lost (or never seen): sync every bottle
}

// Watch makes the index follow changes to the bottles directory from now
// on, so that Search and Sessions sync only the bottles that changed. The
// first query after it syncs everything.
func (ix *Index) Watch() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.watch != nil {
		return nil
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	for _, sub := range []string{"", archivePrefix} {
		dir := filepath.Join(ix.store.Dir, filepath.FromSlash(sub))
		if err := safefile.MkdirPrivate(dir); err != nil {
			fw.Close()
			return err
		}
		if err := fw.Add(dir); err != nil {
			fw.Close()
			return err
		}
	}
	w := &watcher{fw: fw, done: make(chan struct{}), names: map[string]bool{}, all: true}
	go w.run(ix.store)
	ix.watch = w
	return nil
}

func (w *watcher) run(store *bottles.Store) {
	defer close(w.done)
	archive := bottles.ArchiveDir(store.Dir)
	for {
		select {
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			dir, file := filepath.Split(ev.Name)
			if ev.Name == store.PurgeMarker() && !ev.Has(fsnotify.Remove) {
				// A writer asks for a purge (the marker bottles.Store.Write
				// leaves), which a full sync makes.
				w.mu.Lock()
				w.all = true
				w.mu.Unlock()
				continue
			}
			if !isBottleName(file) {
				continue
			}
			name := file
			if filepath.Clean(dir) == archive {
				name = archivePrefix + file
			}
			w.mu.Lock()
			w.names[name] = true
			w.mu.Unlock()
		case _, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			// An overflow (fsnotify.ErrEventOverflow), or any failure of
			// the watch: events may have been lost.
			w.mu.Lock()
			w.all = true
			w.mu.Unlock()
		}
	}
}

// drain returns and forgets what changed since the last drain.
func (w *watcher) drain() (names []string, all bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for n := range w.names {
		names = append(names, n)
	}
	all = w.all
	w.names, w.all = map[string]bool{}, false
	return names, all
}

// redo puts back what a failed sync did not take.
func (w *watcher) redo(names []string, all bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, n := range names {
		w.names[n] = true
	}
	w.all = w.all || all
}

func (w *watcher) close() {
	w.fw.Close()
	<-w.done
}
