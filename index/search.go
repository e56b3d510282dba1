package index

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/render"
)

// ErrNoWords reports a query with nothing to search for: no letters or
// digits.
var ErrNoWords = errors.New("the query has no words to search for")

// Limits on the number of results.
const (
	DefaultLimit = 10
	MaxLimit     = 100
	// Every lists every session in scope (Sessions only: a search gives
	// at most MaxLimit hits), for a page that shows them all.
	Every = -1
)

// Scope says which bottles a search or a list covers.
type Scope struct {
	// Project keeps the sessions of the project this directory is in,
	// however it is written ("/home/u/./app/" is /home/u/app): the nearest
	// directory at or above it that sessions were started in (so that a
	// search from a subdirectory covers its project), or the directory
	// itself when there is none; and the sessions of the directories
	// under that. "" and "/" keep every project.
	Project string
	// Archived adds the sessions the user cleared (/clear): for each, its
	// newest archived bottle, unless the session was resumed and has a
	// current one.
	Archived bool
	// Since and Until bound the time (Until excluded); zero is unbounded.
	// A search bounds the time of each hit, a list the session's last
	// activity.
	Since, Until time.Time
	// Limit bounds the results: DefaultLimit if 0, at most MaxLimit;
	// Every lists every session.
	Limit int
}

func (s Scope) limit() int {
	switch {
	case s.Limit == Every:
		return -1 // SQLite's LIMIT -1: no limit
	case s.Limit <= 0:
		return DefaultLimit
	case s.Limit > MaxLimit:
		return MaxLimit
	}
	return s.Limit
}

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// Hit is one block that matched a search.
type Hit struct {
	Session  string
	Bottle   string // the bottle's path
	Archived bool
	Project  string
	Time     time.Time // zero if the bottle does not show it
	Kind     render.BlockKind
	// Line is the bottle line where the block first matches: the line of
	// the first phrase of the query found whole, or else of the first
	// word of it (the block's first line if neither is, as when the
	// bottle changed under the index).
	Line    int
	Snippet string
	// Match is where Snippet shows the block's first match:
	// Snippet[Match[0]:Match[1]], empty when it shows none.
	Match [2]int
}

// Search finds the blocks that hold every word and phrase of text, best
// matches first (FTS5's bm25, then the most recent). Every hit is checked
// against its bottle on disk before it is returned.
func (ix *Index) Search(ctx context.Context, text string, scope Scope) ([]Hit, error) {
	ps := parseQuery(text)
	if len(ps) == 0 {
		return nil, ErrNoWords
	}
	if err := ix.refresh(ctx); err != nil {
		return nil, err
	}
	var hits []Hit
	rules := ix.shownRules()
	// A bottle rewritten between the query and the check is indexed again
	// and the query run again; twice is plenty outside of a storm of
	// writes, after which the hits that checked out are returned.
	for range 3 {
		var cands []candidate
		if err := ix.do(ctx, func() error {
			in, _, err := ix.projectScope(scope)
			if err == nil {
				cands, err = ix.candidates(ps, in)
			}
			return err
		}); err != nil {
			return nil, err
		}
		var stale []string
		hits, stale = ix.resolve(cands, ps, rules)
		if len(stale) == 0 {
			break
		}
		if err := tolerate(ix.SyncNames(ctx, stale)); err != nil {
			return nil, err
		}
	}
	return hits, nil
}

// candidate is a hit as the index knows it, to be checked on disk.
type candidate struct {
	row, seq, sum, when int64
	score               float64
	kind                render.BlockKind
	path, session       string
	project             string
	archived            bool
	file                fileState
}

// candidateCap bounds how many matches a search ranks. The matches are
// taken newest first and the best of them returned: a word found in a few
// thousand blocks is ranked over all of them, while one found in most
// blocks (the most common words) is ranked over its most recent matches,
// which keeps every search within a bound.
const candidateCap = 2000

// searchSQL is the query of a search whose phrases have the given row
// counts (see rank).
func searchSQL(docs []int64) string {
	args := ""
	for _, d := range docs {
		args += ", " + strconv.FormatInt(d, 10)
	}
	return `SELECT text.rowid, ` + rankFunc + `(text, d.words` + args + `), d.seq, d.sum, d.kind, d.time, b.path, b.session, b.project, b.archived,
		b.dev, b.ino, b.size, b.mtime
	FROM text JOIN docs d ON d.id = text.rowid JOIN bottles b ON b.id = d.bottle
	WHERE text MATCH ? AND (? = 0 OR d.time >= ?) AND (? = 0 OR d.time < ?) AND ` + shownSQL + `
	ORDER BY text.rowid DESC LIMIT ?`
}

// phraseDocs estimates, for each phrase, how many rows hold it, for the
// weights of the phrases against each other (a single phrase needs none).
// FTS5 stores no such counts, and counting a common word's rows means
// reading them all, so a phrase is weighed by its rarest word, and a word
// by its newest dfSample rows: all of them if it has fewer, else
// extrapolated from how far back the sample reached.
func (ix *Index) phraseDocs(ps []phrase) ([]int64, error) {
	out := make([]int64, len(ps))
	if len(ps) < 2 {
		return out, nil
	}
	var top int64
	if err := ix.query(`SELECT coalesce(max(id), 0) FROM docs`, func(s *sqlite3.Stmt) error {
		top = s.ColumnInt64(0)
		return nil
	}); err != nil {
		return nil, err
	}
	for i, p := range ps {
		out[i] = math.MaxInt64
		for _, tok := range p.tokens {
			one := phrase{tokens: []string{tok}}
			var n, low int64
			err := ix.query(`SELECT count(*), coalesce(min(r), 0) FROM (SELECT rowid AS r FROM text WHERE text MATCH ? ORDER BY rowid DESC LIMIT ?)`,
				func(s *sqlite3.Stmt) error {
					n, low = s.ColumnInt64(0), s.ColumnInt64(1)
					return nil
				}, `{body}: `+one.expr(), dfSample)
			if err != nil {
				return nil, err
			}
			if n >= dfSample && low > 0 {
				n = n * top / max(top-low+1, 1)
			}
			out[i] = min(out[i], max(n, 1))
		}
	}
	return out, nil
}

// dfSample is how many of a word's newest rows phraseDocs reads.
const dfSample = 1000

// searchExpr is the FTS5 query of a search: the phrases in the body, and
// the project in the scope column.
func searchExpr(ps []phrase, scope Scope) string {
	expr := "{body}: (" + matchExpr(ps) + ")"
	if dir := scope.dir(); dir != "" {
		expr += " AND " + scopeQuery(dir)
	}
	return expr
}

// candidates returns the best matches of the phrases in scope.
func (ix *Index) candidates(ps []phrase, scope Scope) ([]candidate, error) {
	docs, err := ix.phraseDocs(ps)
	if err != nil {
		return nil, err
	}
	expr := searchExpr(ps, scope)
	since, until := unix(scope.Since), unix(scope.Until)
	var out []candidate
	row := func(s *sqlite3.Stmt) error {
		c := candidate{row: s.ColumnInt64(0), score: s.ColumnFloat(1), seq: s.ColumnInt64(2), sum: s.ColumnInt64(3),
			kind: render.BlockKind(s.ColumnInt(4)), when: s.ColumnInt64(5),
			path: s.ColumnText(6), session: s.ColumnText(7), project: s.ColumnText(8), archived: s.ColumnBool(9)}
		c.file = fileState{size: s.ColumnInt64(12), mtime: s.ColumnInt64(13)}
		c.file.id.Dev, c.file.id.Ino = uint64(s.ColumnInt64(10)), uint64(s.ColumnInt64(11))
		out = append(out, c)
		return nil
	}
	if err := ix.query(searchSQL(docs), row, expr, since, since, until, until, scope.Archived, candidateCap); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b candidate) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score) // higher is better
		}
		return cmp.Compare(b.row, a.row)
	})
	return out[:min(len(out), scope.searchLimit())], nil
}

// searchLimit is limit for a search, which Every does not unbound.
func (s Scope) searchLimit() int {
	if s.Limit == Every {
		return MaxLimit
	}
	return s.limit()
}

// resolve checks candidates against their bottles and makes them hits,
// their snippets shown by rules (see shownRules). It returns the names of
// the bottles that changed since they were indexed (their candidates are
// left out).
func (ix *Index) resolve(cands []candidate, ps []phrase, rules *redact.Rules) ([]Hit, []string) {
	type bottle struct {
		data []byte
		p    *render.Parsed
		ok   bool
		// redo: the bottle was made by other rules than those it is
		// shown by.
		redo bool
	}
	read := map[string]*bottle{}
	var hits []Hit
	var stale []string
	for _, c := range cands {
		b := read[c.path]
		if b == nil {
			b = &bottle{}
			read[c.path] = b
			data, st, err := ix.readBottle(c.path, nil)
			if err == nil && st == c.file {
				if p, err := render.Parse(data, ix.loc); err == nil {
					b.data, b.p, b.ok = data, p, true
					b.redo = p.State.Redact != rules.ID()
				}
			}
			if !b.ok {
				stale = append(stale, c.path)
			}
		}
		if !b.ok {
			continue
		}
		if c.seq >= int64(len(b.p.Blocks)) {
			stale = append(stale, c.path)
			b.ok = false
			continue
		}
		bl := b.p.Blocks[c.seq]
		if blockSum(b.data[bl.Start:bl.End]) != c.sum {
			stale = append(stale, c.path)
			b.ok = false
			continue
		}
		text := b.data[bl.Text:bl.End]
		at, end := locate(text, ps)
		line := bl.Line
		if at >= 0 {
			// From the heading (or the observation line's marker) to the
			// match.
			line += bytes.Count(b.data[bl.Start:bl.Text+at], []byte("\n"))
		}
		if b.redo {
			text = []byte(rules.Redact(string(text)))
			at, end = locate(text, ps)
		}
		h := Hit{Session: c.session, Bottle: filepath.Join(ix.store.Dir, filepath.FromSlash(c.path)), Archived: c.archived,
			Project: c.project, Kind: c.kind, Line: line}
		h.Snippet, h.Match = snippet(text, at, end)
		if c.when != 0 {
			h.Time = time.Unix(c.when, 0).In(ix.loc)
		}
		hits = append(hits, h)
	}
	return hits, stale
}

// Session is what the index knows of a session's bottle.
type Session struct {
	ID          string
	Bottle      string // the bottle's path
	Archived    bool
	Project     string
	Mode        render.Mode
	Started     time.Time // zero if unknown
	LastActive  time.Time // the last time the bottle shows
	FirstPrompt string
	Turns       int // user messages
	Compactions int
}

// timeSQL is the condition on the bottles b that Scope.Since and Until
// keep in a list; its arguments come from timeArgs.
const timeSQL = `(? = 0 OR b.last_active >= ?) AND (? = 0 OR b.last_active < ?)`

func (s Scope) timeArgs() []any {
	since, until := unix(s.Since), unix(s.Until)
	return []any{since, since, until, until}
}

var sessionsSQL = `SELECT b.session, b.archived, b.project, b.mode, b.started, b.last_active, b.first_prompt,
		b.turns, b.compactions, b.path
	FROM bottles b WHERE ` + timeSQL + ` AND ` + scopeSQL + `
	ORDER BY b.last_active DESC, b.started DESC LIMIT ?`

// Sessions lists the sessions in scope, most recently active first.
func (ix *Index) Sessions(ctx context.Context, scope Scope) ([]Session, error) {
	if err := ix.refresh(ctx); err != nil {
		return nil, err
	}
	var out []Session
	rules := ix.shownRules() // the list does not know which rules made each prompt
	err := ix.do(ctx, func() error {
		out = out[:0]
		in, _, err := ix.projectScope(scope)
		if err != nil {
			return err
		}
		args := append(in.timeArgs(), in.args()...)
		args = append(args, in.limit())
		return ix.query(sessionsSQL, func(s *sqlite3.Stmt) error {
			ses := Session{ID: s.ColumnText(0), Archived: s.ColumnBool(1), Project: s.ColumnText(2), Mode: render.Mode(s.ColumnText(3)),
				FirstPrompt: rules.Redact(s.ColumnText(6)), Turns: s.ColumnInt(7), Compactions: s.ColumnInt(8),
				Bottle: filepath.Join(ix.store.Dir, filepath.FromSlash(s.ColumnText(9)))}
			if v := s.ColumnInt64(4); v != 0 {
				ses.Started = time.Unix(v, 0).In(ix.loc)
			}
			if v := s.ColumnInt64(5); v != 0 {
				ses.LastActive = time.Unix(v, 0).In(ix.loc)
			}
			out = append(out, ses)
			return nil
		}, args...)
	})
	return out, err
}

// CountSessions counts the sessions in scope (Scope.Limit aside), as
// Sessions lists them: for what a list that came back empty says of how
// to widen it.
func (ix *Index) CountSessions(ctx context.Context, scope Scope) (int, error) {
	if err := ix.refresh(ctx); err != nil {
		return 0, err
	}
	n := 0
	err := ix.do(ctx, func() error {
		in, _, err := ix.projectScope(scope)
		if err != nil {
			return err
		}
		return ix.query(`SELECT count(*) FROM bottles b WHERE `+timeSQL+` AND `+scopeSQL, func(s *sqlite3.Stmt) error {
			n = s.ColumnInt(0)
			return nil
		}, append(in.timeArgs(), in.args()...)...)
	})
	return n, err
}

// refresh brings the index up to date before a query: the bottles a
// watcher saw change, or every bottle without one. A purge that failed
// does not hold the query up: the index is up to date, and the request
// stays for the next sync.
func (ix *Index) refresh(ctx context.Context) error {
	ix.mu.Lock()
	w := ix.watch
	ix.mu.Unlock()
	if w == nil {
		return tolerate(ix.Sync(ctx))
	}
	names, all := w.drain()
	var err error
	if all {
		err = ix.Sync(ctx)
	} else {
		err = ix.SyncNames(ctx, names)
	}
	if err = tolerate(err); err != nil {
		w.redo(names, all) // try them again next time
	}
	return err
}

// tolerate drops a failed purge (ErrPurge) from a sync's error.
func tolerate(err error) error {
	if errors.Is(err, ErrPurge) {
		return nil
	}
	return err
}

// Stats describes the index.
type Stats struct {
	Path        string // the database file
	Bottles     int
	Sessions    int
	Blocks      int
	Bytes       int64 // size of the database file
	BottleBytes int64 // size of the bottles indexed
	// Build is how far the build of the index got while it is unfinished
	// (nil once it is complete).
	Build *BuildState
}

// Stats reports what the index holds.
func (ix *Index) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := ix.do(ctx, func() (err error) {
		st, err = ix.stats()
		return err
	})
	return st, err
}

// InUse reports what the index in use in dataDir holds, without building
// it or waiting for a build: what a build that was stopped left. An index
// that would have to be built (there is none, or none usable) is reported
// as ErrUnusable.
func InUse(dataDir string) (Stats, error) {
	ix := &Index{dir: Dir(dataDir), store: bottles.Open(dataDir, nil, nil), loc: time.Local}
	defer ix.Close()
	var st Stats
	err := ix.doExisting(func() (err error) {
		st, err = ix.stats()
		return err
	})
	return st, err
}

// stats is Stats with mu held.
func (ix *Index) stats() (Stats, error) {
	st := Stats{Path: ix.genPath(ix.gen)}
	err := ix.query(`SELECT (SELECT count(*) FROM bottles), (SELECT count(DISTINCT session) FROM bottles), (SELECT count(*) FROM docs),
			(SELECT coalesce(sum(size), 0) FROM bottles)`,
		func(s *sqlite3.Stmt) error {
			st.Bottles, st.Sessions, st.Blocks, st.BottleBytes = s.ColumnInt(0), s.ColumnInt(1), s.ColumnInt(2), s.ColumnInt64(3)
			return nil
		})
	if err != nil {
		return st, err
	}
	if st.Build, err = ix.buildState(); err != nil {
		return st, err
	}
	if info, err := statFile(st.Path); err == nil {
		st.Bytes = info
	}
	return st, nil
}

func statFile(path string) (int64, error) {
	var n int64
	for _, suffix := range []string{"", "-wal"} {
		info, err := os.Lstat(path + suffix)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && suffix != "" {
				continue
			}
			return 0, err
		}
		n += info.Size()
	}
	return n, nil
}

// shownRules are the redaction rules what a search or a list shows of the
// bottles goes through: the data directory's now. A bottle made by other
// rules (a pattern added since: the daemon renders its bottles again at
// its next rescan, and nothing else does without it) still holds what
// they left, and so does the index; what is shown of it is redacted by
// today's rules first. A patterns line that cannot be used is said by the
// commands that load the rules to render.
func (ix *Index) shownRules() *redact.Rules {
	rules, _ := bottles.LoadRules(ix.dataDir)
	return rules
}
