package watch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/sources"
)

// freshCache remembers, for each transcript, the stamps (size and
// modification time) of the transcript and of its bottle at which the
// bottle was last found fresh, so that the periodic rescan checks a
// bottle's freshness the way the hook does (bottles.Store.Check), and reads the
// transcript again in full (bottles.VerifyAll), only when one of the two
// files changed, and costs two stats per session otherwise. So a byte
// changed in place anywhere in a transcript leaves its bottle at the first
// rescan after the transcript has been left alone for Config.CheckQuiet:
// within that plus one rescan interval (35 s by default) of the last write
// to it. A write that does not make the file longer is noticed at once,
// by sources.Transcript.Update.
// Rows claude-mem writes are the database watcher's to report; when the
// database comes back after being away, every entry is forgotten.
//
// Its mutex guards m and gen; the fs watcher's rescan and the renders use
// it.
type freshCache struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]freshEntry // transcript path →
	gen int
}

type freshEntry struct {
	transcript, bottle fileStamp
	gen                int
	// outcome is what status says of the bottle: outcomeFresh, archived
	// (bottles.Cleared) or outcomeNothing (the transcript has nothing to
	// render).
	outcome string
}

func newFreshCache(now func() time.Time) *freshCache {
	return &freshCache{now: now, m: map[string]freshEntry{}}
}

// fresh returns what was found of the bottle of the transcript at path at
// these stamps, "" if nothing was.
func (c *freshCache) fresh(path string, transcript, bottle fileStamp) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[path]
	if !ok || e.gen != c.gen || e.transcript != transcript || e.bottle != bottle {
		return ""
	}
	return e.outcome
}

// freshTranscript reports whether the bottle of the transcript at path
// was found fresh at this transcript stamp, whatever the bottle's stamp
// (the caller knows the bottle did not change).
func (c *freshCache) freshTranscript(path string, transcript fileStamp) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[path]
	return ok && e.gen == c.gen && e.transcript == transcript
}

// put records that the bottle needed no render at these stamps, taken
// before it was checked, and what status says of it (see freshEntry). A
// transcript whose time is too recent for a later write to be sure to
// change it is not recorded: it is checked again next time.
func (c *freshCache) put(path string, transcript, bottle fileStamp, outcome string) {
	if !sources.Settled(transcript.mod, c.now()) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[path] = freshEntry{transcript: transcript, bottle: bottle, gen: c.gen, outcome: outcome}
}

// drop forgets a transcript.
func (c *freshCache) drop(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, path)
}

// forget makes every bottle be checked again.
func (c *freshCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
}

// stampOf returns a file's size and modification time; the zero stamp if
// it does not exist.
func stampOf(path string) (fileStamp, error) {
	return statStamp(path, func(info fs.FileInfo) fileStamp {
		return fileStamp{size: info.Size(), mod: info.ModTime()}
	})
}

// transcriptStampOf is stampOf of a transcript, with its side questions'
// stamp (see transcriptStamp).
func transcriptStampOf(path string) (fileStamp, error) {
	return statStamp(path, func(info fs.FileInfo) fileStamp { return transcriptStamp(path, info) })
}

// statStamp is the stamp that stamp makes of the file at path; the zero
// stamp if it does not exist.
func statStamp(path string, stamp func(fs.FileInfo) fileStamp) (fileStamp, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fileStamp{}, nil
	}
	if err != nil {
		return fileStamp{}, err
	}
	return stamp(info), nil
}

// checkFresh checks the bottle of session id, whose transcript is at path
// ("" if it has none) and had stamp ts before the check, against its
// sources, as the hook does, and remembers it when it needs no render. It
// returns what status says of such a bottle: outcomeFresh; archived for a
// missing bottle whose session was cleared and has nothing new (it is not
// to be brought back); outcomeNothing, remembered from a render, for a
// transcript with nothing to render. It returns "" for a bottle to render,
// and whether the transcript was rewritten (then its parse state must be
// read again in full). A bottle without a transcript is not remembered:
// the cache knows transcripts.
//
// Every transcript written since its bottle is read in full, for a change
// made in place (bottles.VerifyAll). With tailFirst, the transcripts' ends
// are checked first and the rest read only if they show nothing new: for
// a catch-up, whose render then reads the transcript in full anyway, and
// does not need to know a rewrite from an append.
func (d *Daemon) checkFresh(ctx context.Context, id, path string, ts fileStamp, tailFirst bool) (outcome string, rewritten bool) {
	bs, bottleErr := stampOf(d.store.Path(id))
	cache := path != "" && bottleErr == nil
	if cache {
		if out := d.freshness.fresh(path, ts, bs); out != "" {
			return out, false
		}
	}
	mem := bottles.CursorNow(ctx, d.db.Load(), id)
	verify := bottles.VerifyAll
	if tailFirst {
		verify = bottles.VerifyTail
	}
	f, st, why, err := d.store.Check(id, path, mem, verify, d.rulesNow())
	if err != nil || (f != bottles.Fresh && f != bottles.Cleared) {
		return "", why == bottles.WhyRewritten
	}
	if verify != bottles.VerifyAll {
		// The bottle (or, cleared, the archived one) shows everything up
		// to the ends of the transcripts and every claude-mem record:
		// what is left to check is the bytes before those ends.
		all, why, err := bottles.CheckState(st, path, nil, bottles.VerifyAll)
		if err != nil || all != bottles.Fresh {
			return "", why == bottles.WhyRewritten
		}
	}
	outcome = outcomeFresh
	if f == bottles.Cleared {
		outcome = bottles.Archived.String()
	}
	if cache {
		d.freshness.put(path, ts, bs, outcome)
	}
	return outcome, false
}

// stampWritten records that the bottle on disk now reflects the
// transcript at the stamp it had before it was read (and the database as
// it was read): until either file changes, the rescan need not check it.
// Not after a read of appended lines alone: a change made in place before
// them (a redaction, among the session's appends) is the rescan's to
// find, once the transcript is quiet.
func (d *Daemon) stampWritten(s *session, path string, ts fileStamp) {
	for _, t := range s.chain {
		if !t.CheckedWhole() {
			return
		}
	}
	bs, err := stampOf(d.store.Path(s.id))
	if err == nil && path != "" && ts != (fileStamp{}) && bs != (fileStamp{}) {
		d.freshness.put(path, ts, bs, outcomeFresh)
	}
}

// stampNothing records that a transcript, at the stamp it had before it
// was read, has nothing to render: it has no bottle and needs none.
func (d *Daemon) stampNothing(path string, ts fileStamp) {
	if path != "" && ts != (fileStamp{}) {
		d.freshness.put(path, ts, fileStamp{}, outcomeNothing)
	}
}
