package index

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ncruces/go-sqlite3"

	"bottled/render"
)

// ErrNoWords reports a query with nothing to search for: no letters or
// digits.
var ErrNoWords = errors.New("the query has no words to search for")

// Limits on the number of results.
const (
	DefaultLimit = 10
	MaxLimit     = 100
)

// Scope says which bottles a search or a list covers.
type Scope struct {
	// Project keeps the sessions of this directory and of directories
	// under it; "" keeps every project.
	Project string
	// Archived adds the sessions the user cleared (/clear): for each, its
	// newest archived bottle, unless the session was resumed and has a
	// current one.
	Archived bool
	// Since and Until bound the time (Until excluded); zero is unbounded.
	// A search bounds the time of each hit, a list the session's last
	// activity.
	Since, Until time.Time
	// Limit bounds the results: DefaultLimit if 0, at most MaxLimit.
	Limit int
}

func (s Scope) limit() int {
	switch {
	case s.Limit <= 0:
		return DefaultLimit
	case s.Limit > MaxLimit:
		return MaxLimit
	}
	return s.Limit
}

// scopeSQL is the condition on the bottles b that a Scope keeps; its
// arguments come from args.
const scopeSQL = `(b.role = 0 OR (? AND b.role = 1))
	AND (? = '' OR b.project = ? OR substr(b.project, 1, length(?) + 1) = ? || '/' OR (b.mode = 'reconstructed' AND b.project = ?))`

func (s Scope) args() []any {
	p := strings.TrimRight(s.Project, "/")
	if s.Project != "" && p == "" {
		p = "/"
	}
	base := ""
	if p != "" {
		base = filepath.Base(p) // reconstructed bottles name the project as claude-mem does
	}
	return []any{s.Archived, p, p, p, p, base}
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
	// Line is the bottle line of the first matching word (of the block,
	// when the words matched only after folding).
	Line    int
	Snippet string
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
	// A bottle rewritten between the query and the check is indexed again
	// and the query run again; twice is plenty outside of a storm of
	// writes, after which the hits that checked out are returned.
	for range 3 {
		var cands []candidate
		if err := ix.do(ctx, func() (err error) {
			cands, err = ix.candidates(matchExpr(ps), scope)
			return err
		}); err != nil {
			return nil, err
		}
		var stale []string
		hits, stale = ix.resolve(cands, ps)
		if len(stale) == 0 {
			break
		}
		if err := ix.SyncNames(ctx, stale); err != nil {
			return nil, err
		}
	}
	return hits, nil
}

// candidate is a hit as the index knows it, to be checked on disk.
type candidate struct {
	seq, sum, when int64
	kind           render.BlockKind
	path, session  string
	project        string
	archived       bool
	file           fileState
}

const searchSQL = `SELECT d.seq, d.sum, d.kind, d.time, b.path, b.session, b.project, b.archived, b.dev, b.ino, b.size, b.mtime
	FROM text JOIN docs d ON d.id = text.rowid JOIN bottles b ON b.id = d.bottle
	WHERE text MATCH ? AND (? = 0 OR d.time >= ?) AND (? = 0 OR d.time < ?) AND ` + scopeSQL + `
	ORDER BY bm25(text), d.id DESC LIMIT ?`

func (ix *Index) candidates(expr string, scope Scope) ([]candidate, error) {
	since, until := unix(scope.Since), unix(scope.Until)
	args := append([]any{expr, since, since, until, until}, scope.args()...)
	args = append(args, scope.limit())
	var out []candidate
	err := ix.query(searchSQL, func(s *sqlite3.Stmt) error {
		c := candidate{seq: s.ColumnInt64(0), sum: s.ColumnInt64(1), kind: render.BlockKind(s.ColumnInt(2)), when: s.ColumnInt64(3),
			path: s.ColumnText(4), session: s.ColumnText(5), project: s.ColumnText(6), archived: s.ColumnBool(7)}
		c.file = fileState{size: s.ColumnInt64(10), mtime: s.ColumnInt64(11)}
		c.file.id.Dev, c.file.id.Ino = uint64(s.ColumnInt64(8)), uint64(s.ColumnInt64(9))
		out = append(out, c)
		return nil
	}, args...)
	return out, err
}

// resolve checks candidates against their bottles and makes them hits. It
// returns the names of the bottles that changed since they were indexed
// (their candidates are left out).
func (ix *Index) resolve(cands []candidate, ps []phrase) ([]Hit, []string) {
	type bottle struct {
		data []byte
		p    *render.Parsed
		ok   bool
	}
	read := map[string]*bottle{}
	var hits []Hit
	var stale []string
	for _, c := range cands {
		b := read[c.path]
		if b == nil {
			b = &bottle{}
			read[c.path] = b
			data, st, err := ix.readBottle(c.path)
			if err == nil && st == c.file {
				if p, err := render.Parse(data, ix.loc); err == nil {
					b.data, b.p, b.ok = data, p, true
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
		at := locate(text, ps)
		line := bl.Line
		if bl.Text > bl.Start {
			line++ // the text starts after the heading
		}
		if at >= 0 {
			line += bytes.Count(text[:at], []byte("\n"))
		} else {
			line = bl.Line
		}
		h := Hit{Session: c.session, Bottle: filepath.Join(ix.bottles, filepath.FromSlash(c.path)), Archived: c.archived,
			Project: c.project, Kind: c.kind, Line: line, Snippet: snippet(text, at)}
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
	Lines       int
}

const sessionsSQL = `SELECT b.session, b.path, b.archived, b.project, b.mode, b.started, b.last_active, b.first_prompt,
		b.turns, b.compactions, b.lines
	FROM bottles b WHERE (? = 0 OR b.last_active >= ?) AND (? = 0 OR b.last_active < ?) AND ` + scopeSQL + `
	ORDER BY b.last_active DESC, b.started DESC LIMIT ?`

// Sessions lists the sessions in scope, most recently active first.
func (ix *Index) Sessions(ctx context.Context, scope Scope) ([]Session, error) {
	if err := ix.refresh(ctx); err != nil {
		return nil, err
	}
	since, until := unix(scope.Since), unix(scope.Until)
	args := append([]any{since, since, until, until}, scope.args()...)
	args = append(args, scope.limit())
	var out []Session
	err := ix.do(ctx, func() error {
		out = out[:0]
		return ix.query(sessionsSQL, func(s *sqlite3.Stmt) error {
			ses := Session{ID: s.ColumnText(0), Bottle: filepath.Join(ix.bottles, filepath.FromSlash(s.ColumnText(1))),
				Archived: s.ColumnBool(2), Project: s.ColumnText(3), Mode: render.Mode(s.ColumnText(4)),
				FirstPrompt: s.ColumnText(7), Turns: s.ColumnInt(8), Compactions: s.ColumnInt(9), Lines: s.ColumnInt(10)}
			if v := s.ColumnInt64(5); v != 0 {
				ses.Started = time.Unix(v, 0).In(ix.loc)
			}
			if v := s.ColumnInt64(6); v != 0 {
				ses.LastActive = time.Unix(v, 0).In(ix.loc)
			}
			out = append(out, ses)
			return nil
		}, args...)
	})
	return out, err
}

// refresh brings the index up to date before a query: the bottles a
// watcher saw change, or every bottle without one.
func (ix *Index) refresh(ctx context.Context) error {
	ix.mu.Lock()
	w := ix.watch
	ix.mu.Unlock()
	if w == nil {
		return ix.Sync(ctx)
	}
	names, all := w.drain()
	var err error
	if all {
		err = ix.Sync(ctx)
	} else {
		err = ix.SyncNames(ctx, names)
	}
	if err != nil {
		w.redo(names, all) // try them again next time
	}
	return err
}

// Stats describes the index.
type Stats struct {
	Path     string // the database file
	Bottles  int
	Sessions int
	Blocks   int
	Bytes    int64 // size of the database file
}

// Stats reports what the index holds.
func (ix *Index) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := ix.do(ctx, func() error {
		st.Path = ix.genPath(ix.gen)
		return ix.query(`SELECT (SELECT count(*) FROM bottles), (SELECT count(DISTINCT session) FROM bottles), (SELECT count(*) FROM docs)`,
			func(s *sqlite3.Stmt) error {
				st.Bottles, st.Sessions, st.Blocks = s.ColumnInt(0), s.ColumnInt(1), s.ColumnInt(2)
				return nil
			})
	})
	if err != nil {
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
