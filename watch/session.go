package watch

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// session is the daemon's parse state for one session: its transcript and
// those of its predecessors in a chain, each read incrementally. The loop
// owns the table of sessions; a session is used by at most one render at a
// time (the scheduler's guarantee), which needs no lock.
type session struct {
	id    string
	used  time.Time             // when a render last started
	chain []*sources.Transcript // predecessors first, the session's own last
	// mem is the session's claude-mem records as last read, for renders
	// while the database cannot be read: the bottle keeps its
	// observations and still follows the transcript.
	mem *sources.ClaudeMem
	// verify: read the transcripts again in full before the next render
	// (set by the loop when it starts the render).
	verify bool
	// rewrote: a transcript was found rewritten (a redaction, say) since
	// the bottle on disk was made from it, which only the parse state can
	// tell: the write that replaces that bottle is told (bottles.Batch.Put),
	// and asks for the search index to forget what the rewrite removed.
	rewrote bool
	// cache keeps the bottle's turns as last rendered, so that a render
	// after an append renders only the turns it changed (render.Cache).
	cache render.Cache
	// spine keeps the conversation as last built from the transcripts, so
	// that after an append only the appended records are read again
	// (sources.SpineBuilder). Like cache, it is used by renders through
	// the cache only.
	spine sources.SpineBuilder
	bytes int64 // the memory it holds, as of its last render (set by the loop)
}

// size estimates the memory a session's parse state, records and render
// cache hold.
func (s *session) size() int64 {
	n := s.mem.Size() + s.cache.Size() + s.spine.Size()
	for _, t := range s.chain {
		n += t.Size()
	}
	return n
}

// Outcomes of a render, as reported in status, besides bottles.Outcome's.
var outcomeWritten = bottles.Written.String()

const (
	outcomeNothing  = "nothing"  // no source has anything to show
	outcomeFresh    = "fresh"    // a check found the bottle current
	outcomeObserver = "observer" // claude-mem's own session: not bottled
	outcomeFailed   = "failed"
	// outcomeHeld: the database cannot be read, and the bottle on disk
	// shows rows of it this render does not have: it is kept as it is
	// until the database can be read again.
	outcomeHeld = "held"
)

// result is what a render reports to the loop.
type result struct {
	id                     string
	transcript             string // the session's transcript, "" if none
	since, began, finished time.Time
	catchUp                bool
	checked                bool // catch-up found no render needed (outcome says why)
	outcome, mode          string
	err                    error
	continued              []string         // sessions newly found to continue this one
	malformed              int              // transcript lines that could not be read
	unknown                *sources.Unknown // what the transcript holds that bottled does not know
	noDB                   bool             // rendered while the database could not be read
	stored                 bool             // Write ran: the bottles directory could be written
	bytes                  int64            // the session's memory after the render
	pendingAfter           bool             // set by the loop
}

// renderSession brings a session's parse state up to date, renders its
// bottle and writes it.
func (d *Daemon) renderSession(ctx context.Context, s *session, catchUp bool) (res result) {
	res.began = d.cfg.Now()
	defer func() {
		res.finished, res.bytes = d.cfg.Now(), s.size()
		if res.err != nil {
			res.outcome = outcomeFailed
		}
	}()
	path := d.transcriptPath(s.id)
	if path == "" && !catchUp { // catch-up knows every transcript there was
		if p, err := sources.FindTranscript(d.cfg.ClaudeDir, s.id); err == nil {
			path = p
			d.mu.Lock()
			d.paths[s.id] = p
			d.mu.Unlock()
		}
	}
	res.transcript = path
	if d.observerSession(path, "") {
		res.outcome = outcomeObserver
		return res
	}
	before, err := transcriptStampOf(path)
	if catchUp && err == nil {
		if out, _ := d.checkFresh(ctx, s.id, path, before, true); out != "" {
			res.outcome, res.checked = out, true
			return res
		}
	}
	d.syncChain(s, path)
	d.expectBottle(s)
	for attempt := 1; ; attempt++ {
		b, db, err := d.renderOnce(ctx, s, path, catchUp, &res)
		if err != nil || b == nil {
			if err == nil && path != "" {
				d.stampNothing(path, before)
			}
			if err == nil && res.outcome == outcomeNothing {
				d.resealLive(ctx, s)
			}
			res.err = err
			return res
		}
		// Written and indexed (or kept out) within this call, its bytes
		// go back, when it returns, for a later render's bottle (a retry
		// after Crossed renders while they are still held).
		defer b.Release()
		res.mode, res.malformed, res.unknown = string(b.State.Mode), b.Malformed, b.State.Unknown
		// The store decides whether the bottle on disk showed what this
		// one may not (made by other rules, from a transcript replaced or
		// cut), and then asks for the search index's purge as it writes;
		// a rewrite in place, which only the parse state can tell, it is
		// told.
		w, err := d.batch.Put(b, s.rewrote)
		if err != nil {
			res.err = err
			return res
		}
		out := w.Outcome
		res.outcome, res.noDB, res.stored = out.String(), db == nil, true
		switch {
		case out == bottles.Crossed && db == nil:
			res.outcome = outcomeHeld
			return res
		case out == bottles.Written:
			s.rewrote = false
			d.written(ctx, s, b, path, before)
			if w.AskedPurge {
				d.purgeAsked(s.id)
			}
			return res
		case out != bottles.Crossed:
			// Not written: the bottle on disk was made from the
			// transcripts as they are now, by a writer that asked for the
			// purge its own write needed.
			s.rewrote = false
			if out == bottles.Covered {
				d.stampWritten(s, path, before)
			}
			if out == bottles.KeptFull {
				d.resealLive(ctx, s)
			}
			return res
		case attempt == bottles.MaxCrossed:
			// Crossed: another writer's bottle read some source further
			// than this render; the sources read again cover both, unless
			// other writers keep racing it.
			res.err = errors.New("other writers kept writing bottles from newer sources")
			return res
		}
	}
}

// written is called, in the render's goroutine, right after the daemon
// wrote a session's bottle b (the one place it does): whatever follows a
// new bottle starts here. path is the session's transcript and before its
// stamp before it was read.
func (d *Daemon) written(ctx context.Context, s *session, b *render.Bottle, path string, before fileStamp) {
	d.stampWritten(s, path, before)
	d.indexBottle(ctx, s.id, b.Bytes)
}

// renderOnce brings the session's parse state up to date, reads its
// claude-mem records and renders its bottle: through the session's render
// cache, except at catch-up, whose sessions changed while the daemon was
// not running and are mostly left alone after (filling a cache for each
// would cost the catch-up its copies, and memory, for nothing). It
// returns a nil bottle (and sets res.outcome) when there is nothing to
// render or the session (its transcript at path) is claude-mem's own, and
// the database it read (nil if none).
func (d *Daemon) renderOnce(ctx context.Context, s *session, path string, catchUp bool, res *result) (*render.Bottle, *sources.ClaudeMemDB, error) {
	var live []*sources.Transcript
	update := (*sources.Transcript).Update
	if s.verify {
		update = (*sources.Transcript).UpdateVerified
	}
	for _, t := range s.chain {
		rewrites := t.Rewrites()
		if _, err := update(t); err != nil {
			if isNotExist(err) {
				continue // deleted: the bottle keeps what it had
			}
			return nil, nil, err
		}
		if t.Rewrites() != rewrites {
			s.rewrote = true
		}
		live = append(live, t)
		if next := t.ContinuedIn(); next != "" && d.learnLink(t.SessionID, next) && next != s.id {
			res.continued = append(res.continued, next)
		}
	}
	in := render.Input{SessionID: s.id, Now: d.cfg.Now(), Location: time.Local, Rules: d.rulesNow()}
	if !catchUp {
		in.Cache = &s.cache
	}
	switch {
	case len(live) > 0 && catchUp:
		in.Spine = sources.BuildSpine(s.id, live)
	case len(live) > 0:
		in.Spine = s.spine.Build(s.id, live)
	}
	if in.Spine != nil {
		if d.observerSession(path, in.Spine.CWD) {
			res.outcome = outcomeObserver
			return nil, nil, nil
		}
	}
	db := d.db.Load()
	switch {
	case db != nil:
		mem, err := db.Session(ctx, s.id)
		if err != nil {
			// Rendering without the database would drop observations
			// from the bottle; try again later instead.
			return nil, nil, err
		}
		in.ClaudeMem, s.mem = mem, mem
	case s.mem != nil:
		// The database cannot be read now: the records last read keep
		// the bottle's observations (Write refuses a bottle without them).
		in.ClaudeMem = s.mem
	}
	b, err := render.Render(in)
	if errors.Is(err, render.ErrNothing) {
		res.outcome = outcomeNothing
		return nil, db, nil
	}
	return b, db, err
}

// expectBottle gives the session's transcripts that hold no parse state
// (not read since the daemon started, or since it evicted the session)
// the states its bottle recorded of them, so that their first read tells
// a rewrite (a redaction) from an append at no extra cost.
func (d *Daemon) expectBottle(s *session) {
	unread := false
	for _, t := range s.chain {
		unread = unread || t.State().Offset == 0
	}
	if !unread {
		return
	}
	st, err := bottles.ReadState(d.store.Path(s.id))
	if err != nil {
		return
	}
	for _, t := range s.chain {
		for _, fs := range st.Transcripts {
			t.Expect(fs)
		}
	}
}

// syncChain makes s.chain the parse state of the session's predecessors,
// its own transcript and their side-question transcripts (see
// sources.ChainFiles), keeping the state of files it already had.
func (d *Daemon) syncChain(s *session, path string) {
	var paths []string
	if path != "" {
		paths = sources.ChainFiles(append(d.predecessorPaths(s.id, filepath.Dir(path)), path))
	}
	have := map[string]*sources.Transcript{}
	for _, t := range s.chain {
		have[t.Path] = t
	}
	chain := make([]*sources.Transcript, 0, len(paths))
	for _, p := range paths {
		t := have[p]
		if t == nil {
			id := sources.SessionOf(p)
			if p == path {
				id = s.id
			}
			t = sources.NewTranscript(id, p)
		}
		chain = append(chain, t)
	}
	s.chain = chain
}

// predecessorPaths returns the transcripts a session continued from,
// oldest first, from the continued-in links known. The first time a
// project directory is needed, its files' tails are read for links that
// were written before the daemon started.
func (d *Daemon) predecessorPaths(id, dir string) []string {
	d.scanLinks(dir)
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, p := range sources.ChainBack(d.links, id) {
		path := d.paths[p]
		if path == "" {
			path = filepath.Join(dir, p+".jsonl")
		}
		out = append(out, path)
	}
	return out
}

// scanLinks reads the tails of a project directory's transcripts for
// continued-in links, once per directory; links learned from parse state
// since take precedence.
//
// Renders of sessions in the same directory that come meanwhile (the
// catch-up's workers start on a directory together) wait for that read:
// one that went on without the links would render a chain's last session
// without its predecessors, and nothing would render it again.
func (d *Daemon) scanLinks(dir string) {
	d.mu.Lock()
	scan, started := d.linkScans[dir]
	if !started {
		scan = make(chan struct{})
		d.linkScans[dir] = scan
	}
	d.mu.Unlock()
	if started {
		<-scan
		return
	}
	defer close(scan)
	found, err := sources.Links(dir)
	if err != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for from, to := range found {
		if _, ok := d.links[from]; !ok {
			d.links[from] = to
		}
	}
}

// learnLink records that session from continued in session to, reporting
// whether that is news.
func (d *Daemon) learnLink(from, to string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.links[from] == to {
		return false
	}
	d.links[from] = to
	return true
}
