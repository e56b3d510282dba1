package watch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/sources"
)

// fsWatch turns file system events into changes for the loop. It watches
// <claude-dir> (until projects/ exists), projects/, every project directory
// in it, and the data directory, where claude-mem's database lives; it
// re-stats every transcript periodically and after an event overflow, and
// polls for roots that do not exist yet. The side questions (/btw) of a
// session are transcripts of their own in <sessionId>/subagents/ beside
// its transcript: the session's directory and that one are watched once
// the session is seen written to (or a rescan finds a side question new),
// and no longer once it has been left alone for sessionWatchIdle, so that
// only live sessions cost watches; the rescan's stamps cover the others.
//
// Its state is owned by its run goroutine, except during initialScan, which
// runs before it.
type fsWatch struct {
	fsDeps
	w        *fsnotify.Watcher
	projects string // <claude-dir>/projects

	watched map[string]bool // directories with a watch
	// seen maps each transcript path to its size and mtime last seen. The
	// run goroutine writes it holding seenMu and reads it without; others
	// (status) read it holding seenMu.
	seen   map[string]fileStamp
	seenMu sync.Mutex
	// unwatched are the directories a watch could not be added to, and
	// why; each is said once, and the rescan tries again.
	unwatched map[string]string
	limitSaid bool // the inotify watch limit was logged
	// links maps the file a transcript symlink points to onto the
	// transcript: writes to it are seen in its own directory, which is
	// watched too.
	links map[string]string
	// odd are the paths, named like transcripts, of files that are not
	// regular files (see statTranscript), each logged once.
	odd map[string]bool
	// bottlesDir is the bottles directory's stamp at the last rescan, if
	// it was settled then: while it is the same, no bottle was written,
	// removed or replaced (all go by rename), and the rescan need not
	// stat each. tempsLeft: the last rescan left young temporary files.
	bottlesDir fileStamp
	tempsLeft  bool
	// checks is the goroutine checking bottles for the rescan (see
	// checkFresh), which sets checking while it runs; run waits for it.
	checks   sync.WaitGroup
	checking atomic.Bool
	// sessionDirs maps the <sessionId> and <sessionId>/subagents
	// directories of live sessions (watched, or in unwatched) onto their
	// transcripts.
	sessionDirs map[string]string
	// guardDue: the lock file, the socket or the data directory changed;
	// the guard checks them at the next tick (rm -rf has finished by then,
	// and is not raced by files made again under it). The rescan checks
	// them anyway.
	guardDue bool
}

type fileStamp struct {
	size int64
	mod  time.Time
	// asides is, for a transcript, the stamp of its session's /btw
	// side-question transcripts (see asideStamp): a side question writes
	// nothing into the session's own transcript.
	asides asideStamp
}

// sessionWatchIdle is how long a session's transcript and side questions
// must have been left alone before the rescan removes the watches of its
// directories (see watchAsides): without it every session written to while
// the daemon runs keeps two inotify watches for good, out of a limit
// shared by every program of the user. A side question asked of a session
// idle for longer reaches its bottle at the next rescan (Config.Rescan,
// 30 s by default) instead of at once, and the watches are added again.
const sessionWatchIdle = 10 * time.Minute

// asideLists remembers the side-question transcripts of each subagents
// directory as of the directory's modification time, which changes
// whenever a file is added to it or removed: listing a directory costs
// several stats (measured 70–90 µs for three files against 2–6 µs for a
// stat), for every transcript at every rescan, and most directories never
// change. A time that is not settled yet (sources.Settled) is not trusted
// to change again, and the directory is listed each time. The mutex
// guards the map; renders and the file watcher stamp transcripts.
var asideLists = struct {
	sync.Mutex
	m map[string]asideList
}{m: map[string]asideList{}}

type asideList struct {
	mod   time.Time
	files []string
}

// asideFiles is sources.AsideFiles of the transcript at path, listed again
// only when its subagents directory changed.
func asideFiles(path string) []string {
	dir := sources.SubagentsDir(path)
	info, err := os.Stat(dir)
	if err != nil {
		asideLists.Lock()
		delete(asideLists.m, dir)
		asideLists.Unlock()
		return nil
	}
	asideLists.Lock()
	l, ok := asideLists.m[dir]
	asideLists.Unlock()
	if ok && l.mod.Equal(info.ModTime()) {
		return l.files
	}
	files := sources.AsideFiles(path)
	// A directory's time is the kernel's: the real clock, not Config.Now,
	// says whether it has settled.
	if sources.Settled(info.ModTime(), time.Now()) {
		asideLists.Lock()
		asideLists.m[dir] = asideList{info.ModTime(), files}
		asideLists.Unlock()
	}
	return files
}

// asideStamp sums up a session's side-question transcripts: how many, their
// total size and the newest time among them.
type asideStamp struct {
	n    int
	size int64
	mod  time.Time
}

// transcriptStamp is the stamp of the transcript at path, whose file info
// is info: its size and time, and its side questions'.
func transcriptStamp(path string, info os.FileInfo) fileStamp {
	st := fileStamp{size: info.Size(), mod: info.ModTime()}
	for _, a := range asideFiles(path) {
		if ai, err := os.Stat(a); err == nil {
			st.asides.n++
			st.asides.size += ai.Size()
			if ai.ModTime().After(st.asides.mod) {
				st.asides.mod = ai.ModTime()
			}
		}
	}
	return st
}

// newFSWatch makes the file watcher. Without one (the inotify instance
// limit is reached), the daemon still works: it says so once and finds
// every change at the rescan.
func newFSWatch(deps fsDeps) *fsWatch {
	f := newWatchState(deps)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		f.log.Warn(fmt.Sprintf("cannot watch files: %v (with fs.inotify.max_user_instances reached, raise it with "+
			"sudo sysctl fs.inotify.max_user_instances=1024); every change reaches its bottle at the next rescan (every %v) instead",
			err, f.rescan))
		f.rec.failure(Failure{Time: f.now(), Error: "cannot watch files: " + err.Error()})
		return f
	}
	f.w = w
	return f
}

// newWatchState makes a file watcher without an fsnotify watcher: one that
// finds changes only when its rescan runs.
func newWatchState(deps fsDeps) *fsWatch {
	deps.claude, deps.data = filepath.Clean(deps.claude), filepath.Clean(deps.data)
	return &fsWatch{
		fsDeps: deps, projects: filepath.Clean(sources.ProjectsDir(deps.claude)),
		watched: map[string]bool{}, seen: map[string]fileStamp{}, unwatched: map[string]string{},
		links: map[string]string{}, odd: map[string]bool{}, sessionDirs: map[string]string{},
	}
}

func (f *fsWatch) close() {
	if f.w != nil {
		f.w.Close()
	}
}

// events and errors are the watcher's channels; nil (never ready) without
// a watcher.
func (f *fsWatch) events() chan fsnotify.Event {
	if f.w == nil {
		return nil
	}
	return f.w.Events
}

func (f *fsWatch) errors() chan error {
	if f.w == nil {
		return nil
	}
	return f.w.Errors
}

// initialScan sets up the watches and lists, for the start-up catch-up,
// every transcript (with its path), newest first, then every bottle whose
// transcript is gone (claude-mem may have rows for it that were written
// while the daemon was down; no path), newest first.
func (f *fsWatch) initialScan() []dated {
	f.add(f.data)
	f.ensureRoots()
	var all []dated
	for _, p := range sources.ListTranscripts(f.claude) {
		info, err := f.statTranscript(p)
		if err != nil {
			continue
		}
		id := sources.SessionOf(p)
		f.setSeen(p, transcriptStamp(p, info))
		f.follow(p)
		if f.observer(p, "") {
			continue
		}
		all = append(all, dated{id: id, path: p, mod: info.ModTime()})
	}
	newestFirst(all)
	live := map[string]bool{}
	for _, e := range all {
		live[e.id] = true
	}
	f.status()
	for _, id := range orphanBottles(f.store.Dir, live) {
		all = append(all, dated{id: id})
	}
	return all
}

// dated is a session with the time its transcript (at path, if it has
// one) or its bottle was last written.
type dated struct {
	id, path string
	mod      time.Time
}

// newestFirst sorts sessions newest first, then by id.
func newestFirst(all []dated) { slices.SortFunc(all, newer) }

// newer orders sessions newest first, then by id.
func newer(a, b dated) int { return cmp.Or(b.mod.Compare(a.mod), strings.Compare(a.id, b.id)) }

// bottleFiles yields the bottles in dir by session, in the directory's
// order: the files named <session>.md for a valid session id, not what
// else is there (temporary files, the archive, a file a user put there).
func bottleFiles(dir string) iter.Seq2[string, os.DirEntry] {
	return func(yield func(string, os.DirEntry) bool) {
		f, err := os.Open(dir)
		if err != nil {
			return
		}
		defer f.Close()
		entries, _ := f.ReadDir(-1)
		for _, e := range entries {
			id, ok := strings.CutSuffix(e.Name(), ".md")
			if ok && !e.IsDir() && sources.ValidSessionID(id) && !yield(id, e) {
				return
			}
		}
	}
}

// orphans lists the sessions of the bottles whose transcript is not
// among those seen.
func (f *fsWatch) orphans() []string {
	live := map[string]bool{}
	for p := range f.seen {
		live[sources.SessionOf(p)] = true
	}
	return orphanBottles(f.store.Dir, live)
}

// orphanBottles lists the sessions of the bottles in dir that are not in
// live, newest first.
func orphanBottles(dir string, live map[string]bool) []string {
	var all []dated
	for id, e := range bottleFiles(dir) {
		if live[id] {
			continue
		}
		if info, err := e.Info(); err == nil {
			all = append(all, dated{id: id, mod: info.ModTime()})
		}
	}
	newestFirst(all)
	ids := make([]string, len(all))
	for i, e := range all {
		ids[i] = e.id
	}
	return ids
}

// run reads events until ctx is done.
func (f *fsWatch) run(ctx context.Context) {
	defer f.checks.Wait()
	rescan := time.NewTicker(f.rescan)
	defer rescan.Stop()
	roots := time.NewTicker(f.rootPoll)
	defer roots.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-f.events():
			if !ok {
				return
			}
			f.handle(ctx, ev)
		case err, ok := <-f.errors():
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				f.log.Warn("file events overflowed; rescanning")
				f.rescanAll(ctx)
				continue
			}
			f.log.Warn("file watch error", "err", err)
			f.rec.failure(Failure{Time: f.now(), Error: "watch: " + err.Error()})
		case <-roots.C:
			if !f.watched[f.projects] {
				f.ensureRootsAndScan(ctx)
			}
			if f.guardDue || !f.watched[f.data] {
				f.checkGuard()
			}
			if !f.watched[f.data] {
				f.add(f.data) // deleted and made again
			}
		case <-rescan.C:
			f.rescanAll(ctx)
		case <-f.rescanNow:
			f.rescanAll(ctx)
		}
	}
}

func (f *fsWatch) handle(ctx context.Context, ev fsnotify.Event) {
	if ev.Op == fsnotify.Chmod {
		return // attribute noise (backup tools, indexers)
	}
	dir, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
	switch {
	case ev.Name == f.data:
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			delete(f.watched, f.data) // fsnotify drops the watch itself
			f.guardDue = true
		}
	case dir == f.data:
		switch name {
		case "claude-mem.db", "claude-mem.db-wal":
			f.pokeDB()
		case LockFile, SocketFile:
			f.guardDue = true
		case filepath.Base(index.Dir(f.data)):
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				f.checkIndex()
			}
		}
	case ev.Name == f.projects || dir == f.claude && name == "projects":
		if ev.Has(fsnotify.Create) {
			f.ensureRootsAndScan(ctx)
		}
	case dir == f.projects:
		if ev.Has(fsnotify.Create) && isDir(ev.Name) {
			f.add(ev.Name)
			f.scanDir(ctx, ev.Name) // files written before the watch landed
			f.status()
		}
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			delete(f.watched, ev.Name) // fsnotify drops the watch itself
			delete(f.unwatched, ev.Name)
			f.status()
		}
	case f.sessionDirs[ev.Name] != "" && (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)):
		delete(f.sessionDirs, ev.Name) // fsnotify drops the watch itself
		delete(f.watched, ev.Name)
		delete(f.unwatched, ev.Name)
	case f.sessionDirs[dir] != "":
		transcript := f.sessionDirs[dir]
		switch {
		case name == "subagents" && ev.Has(fsnotify.Create):
			f.watchAsides(transcript)
			if len(sources.AsideFiles(transcript)) > 0 {
				f.touched(ctx, transcript) // written before the watch landed
			}
		case sources.IsAsideFile(name):
			f.touched(ctx, transcript)
		}
	case f.links[ev.Name] != "":
		f.touched(ctx, f.links[ev.Name])
	case f.watched[dir] && filepath.Dir(dir) == f.projects && ev.Has(fsnotify.Create) && sources.ValidSessionID(name) && isDir(ev.Name):
		// A session's own directory, beside its transcript: its side
		// questions will be written under it.
		transcript := ev.Name + ".jsonl"
		f.watchAsides(transcript)
		if len(sources.AsideFiles(transcript)) > 0 {
			f.touched(ctx, transcript) // written before the watches landed
		}
	case f.watched[dir] && sources.IsSessionFile(name):
		f.watchAsides(ev.Name)
		f.touched(ctx, ev.Name)
	}
}

// watchAsides watches the directory beside a live session's transcript
// (<sessionId>, where subagents/ appears) and its subagents/ directory,
// where the transcripts of its side questions are written, as far as they
// exist. A watch that cannot be added leaves them to the rescan.
func (f *fsWatch) watchAsides(transcript string) {
	for _, dir := range []string{strings.TrimSuffix(transcript, ".jsonl"), sources.SubagentsDir(transcript)} {
		if f.watched[dir] {
			continue
		}
		if !isDir(dir) {
			return // nor is the one inside it
		}
		f.add(dir)
		f.sessionDirs[dir] = transcript // watched or not: unwatchIdle forgets it
	}
}

func (f *fsWatch) setSeen(path string, stamp fileStamp) {
	f.seenMu.Lock()
	defer f.seenMu.Unlock()
	f.seen[path] = stamp
}

// transcripts returns the transcripts known and their stamps.
func (f *fsWatch) transcripts() map[string]fileStamp {
	f.seenMu.Lock()
	defer f.seenMu.Unlock()
	return maps.Clone(f.seen)
}

// follow watches the directory of the file a transcript symlink points
// to, so that writes to it are seen; a transcript that is not a symlink
// (any more) is forgotten.
func (f *fsWatch) follow(path string) {
	for target, link := range f.links {
		if link == path {
			delete(f.links, target)
		}
	}
	info, err := os.Lstat(path)
	if err != nil || info.Mode()&os.ModeSymlink == 0 {
		return
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return
	}
	f.links[target] = path
	f.add(filepath.Dir(target))
}

// checkGuard runs the guard's check.
func (f *fsWatch) checkGuard() {
	f.guardDue = false
	if f.guard != nil {
		f.guard()
	}
}

// touched reports a transcript as changed. A file that is not a regular
// file is no transcript: one that took a transcript's place is as if it
// were gone, another is left alone.
func (f *fsWatch) touched(ctx context.Context, path string) {
	info, err := f.statTranscript(path)
	if err != nil {
		if _, known := f.seen[path]; known || !errors.Is(err, sources.ErrNotRegular) {
			f.changed(ctx, path, fileStamp{}, false)
		}
		return
	}
	f.changed(ctx, path, transcriptStamp(path, info), true)
}

// changed reports a transcript as changed: it now has stamp if it exists,
// else it is gone.
func (f *fsWatch) changed(ctx context.Context, path string, stamp fileStamp, exists bool) {
	if exists {
		if _, known := f.seen[path]; !known {
			f.follow(path)
		}
		f.setSeen(path, stamp)
	} else {
		f.seenMu.Lock()
		delete(f.seen, path)
		f.seenMu.Unlock()
		f.follow(path)
	}
	if f.observer(path, "") {
		return
	}
	f.send(ctx, change{id: sources.SessionOf(path), path: path, at: f.now()})
}

// ensureRoots adds the watches that can be added: projects/ and each
// project directory if projects/ exists, else <claude-dir> to see it
// appear.
func (f *fsWatch) ensureRoots() {
	if !isDir(f.projects) {
		if isDir(f.claude) {
			f.add(f.claude)
		}
		return
	}
	f.add(f.projects)
	entries, err := os.ReadDir(f.projects)
	if err != nil {
		return
	}
	for _, e := range entries {
		// A project directory may be a symlink to one elsewhere: the
		// watch follows it.
		if dir := filepath.Join(f.projects, e.Name()); e.IsDir() || e.Type()&os.ModeSymlink != 0 && isDir(dir) {
			f.add(dir)
		}
	}
}

func (f *fsWatch) ensureRootsAndScan(ctx context.Context) {
	f.ensureRoots()
	if f.watched[f.projects] {
		f.rescanAll(ctx)
	}
	f.status()
}

func (f *fsWatch) add(dir string) {
	if f.watched[dir] {
		return
	}
	err := errNoWatcher
	if f.w != nil {
		err = f.w.Add(dir)
	}
	switch {
	case err == errNoWatcher:
		f.unwatched[dir] = err.Error()
	case err == nil:
		f.watched[dir] = true
		if _, ok := f.unwatched[dir]; ok {
			delete(f.unwatched, dir)
			if len(f.unwatched) == 0 {
				f.log.Info("every directory is watched again")
				f.limitSaid = false
			}
		}
	case isNotExist(err):
	case errors.Is(err, syscall.ENOSPC):
		// inotify's "no space left on device": the per-user watch limit.
		f.unwatched[dir] = WhyWatchLimit
		if !f.limitSaid {
			f.limitSaid = true
			f.log.Warn(watchLimitMessage(f.rescan), "dir", dir)
			f.rec.failure(Failure{Time: f.now(), Error: "inotify watch limit reached: some directories are followed by the rescan only"})
		}
	default:
		why := err.Error()
		if f.unwatched[dir] != why {
			f.unwatched[dir] = why
			f.log.Warn("cannot watch directory; changes in it wait for the rescan", "dir", dir, "err", err)
			f.rec.failure(Failure{Time: f.now(), Error: "watch " + dir + ": " + why})
		}
	}
}

// errNoWatcher: there is no file watcher (see newFSWatch).
var errNoWatcher = errors.New("no file watcher")

// watchLimitMessage says, in words a user acts on, that the inotify watch
// limit was reached, what that costs, and how to raise it.
func watchLimitMessage(rescan time.Duration) string {
	limit := "?"
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); err == nil {
		limit = strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("the inotify watch limit is reached (fs.inotify.max_user_watches = %s, shared by every program of this user): "+
		"some directories are not watched, and changes in them reach their bottles at the next rescan (every %v) instead of at once; "+
		"bottled status lists them. To raise the limit: sudo sysctl fs.inotify.max_user_watches=524288 "+
		"(and put that line in /etc/sysctl.d/ to keep it)", limit, rescan)
}

// rescanAll re-stats every transcript and reports those that changed since
// last seen, and those whose bottle is not fresh (checked the way the hook
// does, when the transcript or the bottle changed since it was last found
// fresh): a bottle removed, rewritten or left stale by a failed render is
// found without any event. It also picks up project directories whose
// watch was missed.
func (f *fsWatch) rescanAll(ctx context.Context) {
	f.checkGuard()
	f.ensureRoots()
	f.loadRules(ctx, f.orphans)
	now := f.now()
	dir, _ := stampOf(f.store.Dir)
	same := dir != (fileStamp{}) && dir == f.bottlesDir
	if !same || f.tempsLeft {
		f.tempsLeft = f.cleanTemp()
	}
	f.bottlesDir = fileStamp{}
	if sources.Settled(dir.mod, now) {
		f.bottlesDir = dir
	}
	if _, err := os.Lstat(f.store.PurgeMarker()); err == nil {
		f.askPurge() // a hook or the render command asked for a purge
	}
	f.checkIndex()
	current := map[string]bool{}
	var check []stamped
	for _, p := range sources.ListTranscripts(f.claude) {
		info, err := f.statTranscript(p)
		if errors.Is(err, sources.ErrNotRegular) {
			continue // not a transcript: gone, if it was one
		}
		current[p] = true
		if err != nil {
			continue
		}
		stamp := transcriptStamp(p, info)
		if old, ok := f.seen[p]; !ok || old != stamp {
			if ok && old.asides != stamp.asides {
				f.watchAsides(p) // a side question asked now: follow its answer
			}
			f.changed(ctx, p, stamp, true)
			continue
		}
		// A transcript written in the last moments is its events' to
		// follow (a render is due or just done); it is checked once quiet.
		quiet := now.Sub(stamp.mod) >= f.checkQuiet
		if quiet && !(same && f.freshness.freshTranscript(p, stamp)) {
			check = append(check, stamped{p, stamp})
		}
	}
	for p := range f.seen {
		if !current[p] {
			f.freshness.drop(p)
			f.touched(ctx, p) // gone: its bottle is rendered from what is left
		}
	}
	f.unwatchIdle(now)
	f.status()
	f.checkBottles(ctx, check)
}

// unwatchIdle removes the watches of the session directories (see
// watchAsides) of the sessions left alone for sessionWatchIdle, or gone.
func (f *fsWatch) unwatchIdle(now time.Time) {
	for dir, transcript := range f.sessionDirs {
		stamp, ok := f.seen[transcript]
		if ok && (now.Sub(stamp.mod) < sessionWatchIdle || now.Sub(stamp.asides.mod) < sessionWatchIdle) {
			continue
		}
		if f.watched[dir] {
			f.w.Remove(dir) // an error: the watch went with the directory
		}
		delete(f.sessionDirs, dir)
		delete(f.watched, dir)
		delete(f.unwatched, dir)
	}
}

// stamped is a transcript and its stamp when last seen.
type stamped struct {
	path  string
	stamp fileStamp
}

// checkBottles checks the bottles of the transcripts against their sources,
// in a goroutine of its own, so that file events keep being handled
// meanwhile (a check may read a transcript in full), and reports the stale
// ones. If the previous rescan's checks are still running, these wait for
// the next rescan.
//
// A rescan is counted in status once its checks are done.
func (f *fsWatch) checkBottles(ctx context.Context, transcripts []stamped) {
	if len(transcripts) == 0 {
		f.rescanned()
		return
	}
	if !f.checking.CompareAndSwap(false, true) {
		return
	}
	f.checks.Go(func() {
		defer f.checking.Store(false)
		for _, t := range transcripts {
			if ctx.Err() != nil {
				return
			}
			id, began := sources.SessionOf(t.path), f.now()
			out, rewritten := f.checkFresh(ctx, id, t.path, t.stamp, false)
			if out == "" {
				f.send(ctx, change{id: id, path: t.path, at: f.now(), rescan: true, verify: rewritten})
				continue
			}
			// What status says of the bottle: archived, once a hook
			// archived it for /clear, which the daemon is not told.
			f.rec.checked(id, out, began)
		}
		f.rescanned()
	})
}

// rescanned counts a rescan finished, checks included.
func (f *fsWatch) rescanned() { f.rec.update(func(st *Status) { st.Rescans++ }) }

// scanDir reports every transcript in a new project directory.
func (f *fsWatch) scanDir(ctx context.Context, dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() && sources.IsSessionFile(e.Name()) {
			f.touched(ctx, filepath.Join(dir, e.Name()))
		}
	}
}

// status publishes the watch state: the directories watched. The
// transcripts are counted when status is asked for (see Daemon.survey).
func (f *fsWatch) status() {
	projects := 0
	for dir := range f.watched {
		if filepath.Dir(dir) == f.projects {
			projects++
		}
	}
	roots := []Root{{Path: f.projects, Watched: f.watched[f.projects]}, {Path: f.data, Watched: f.watched[f.data]}}
	unwatched, why := slices.Sorted(maps.Keys(f.unwatched)), maps.Clone(f.unwatched)
	f.rec.update(func(st *Status) {
		st.Roots, st.Projects, st.Unwatched, st.UnwatchedWhy = roots, projects, unwatched, why
	})
}

// statTranscript stats a transcript, following a symlink. Under a
// transcript's name, anything but a regular file (a named pipe, whose open
// waits for a writer; a socket; a device) is no transcript, and never
// opened (see sources.OpenRegular); the first time a path is found so, the
// log says it is left alone.
func (f *fsWatch) statTranscript(path string) (os.FileInfo, error) {
	info, err := sources.StatRegular(path)
	switch {
	case errors.Is(err, sources.ErrNotRegular):
		if !f.odd[path] {
			f.odd[path] = true
			f.log.Warn("left alone: not a transcript", "err", err)
		}
	case err == nil, isNotExist(err):
		delete(f.odd, path)
	}
	return info, err
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}
