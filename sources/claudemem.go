package sources

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ncruces/go-sqlite3"
	_ "github.com/ncruces/go-sqlite3/driver" // registers "sqlite3"; never import .../embed

	"github.com/bottled-dev/bottled/textcut"
)

var (
	// ErrNoClaudeMemDB reports that claude-mem's database does not exist.
	ErrNoClaudeMemDB = errors.New("no claude-mem database")
	// ErrClaudeMemShape reports a file that is not a claude-mem database bottled
	// can read: not SQLite, or without the tables and columns it joins on.
	ErrClaudeMemShape = errors.New("unreadable claude-mem database")
)

const (
	// busyTimeout is how long a read waits for claude-mem's writer. The
	// worker itself uses 5 s; readers in WAL mode rarely wait at all.
	busyTimeout = 5 * time.Second
	// maxPromptChars caps a prompt read from the database. claude-mem caps
	// at 4,000 since 13.5.0, but older rows run to megabytes.
	maxPromptChars = 100_000
	// maxFieldChars caps observation and summary fields, of which a bottle
	// shows a line or a paragraph.
	maxFieldChars = 8_000
	// observerProject is the project of claude-mem's own observer
	// sessions: the name of the directory they run in (ObserverDir).
	observerProject = "observer-sessions"
)

// ClaudeMemFile is the database file inside claude-mem's data directory.
func ClaudeMemFile(dataDir string) string { return filepath.Join(dataDir, "claude-mem.db") }

// ClaudeMemDB reads claude-mem's database. It is read-only: the connection is
// opened with mode=ro, never checkpoints, and holds no transaction between
// calls, so claude-mem's writer is never held up.
//
// A ClaudeMemDB is safe for concurrent use.
type ClaudeMemDB struct {
	path string
	db   *sql.DB

	// mu guards the schema cache: the schema read last and SQLite's schema
	// cookie when it was read. Reading a schema costs a query per table;
	// the cookie, one query, changes whenever claude-mem migrates.
	mu     sync.Mutex
	cached *schema
	cookie int64
}

// OpenClaudeMemDB opens the database at path read-only and checks that it has
// the shape of a claude-mem database. It returns an error wrapping
// ErrNoMemoryDB or ErrMemoryShape when that is the problem.
func OpenClaudeMemDB(ctx context.Context, path string) (*ClaudeMemDB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open memory db %s: %w", path, err)
	}
	if info, err := os.Stat(abs); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w at %s", ErrNoClaudeMemDB, abs)
		}
		return nil, fmt.Errorf("open memory db %s: %w", abs, err)
	} else if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a file", ErrClaudeMemShape, abs)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	dsn := (&url.URL{Scheme: "file", OmitHost: true, Path: abs, RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("open memory db %s: %w", abs, err)
	}
	m := &ClaudeMemDB{path: abs, db: db}
	if _, err := m.schema(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return m, nil
}

// Path is the database file's absolute path.
func (m *ClaudeMemDB) Path() string { return m.path }

// Close closes the connection.
func (m *ClaudeMemDB) Close() error { return m.db.Close() }

// schema describes the columns a database has, under the names bottled
// uses. claude-mem renamed columns (v17) and added others over ~60
// migrations, and rebuilds reorder them, so everything is read by name.
type schema struct {
	version int // highest schema_versions entry, 0 if none

	sessContent, sessMemory string // sdk_sessions: content_session_id / memory_session_id (or old names)
	sessPlatform            bool
	sessCols                map[string]bool

	promptContent string // user_prompts: content_session_id (or claude_session_id)
	promptSessDB  bool   // user_prompts.session_db_id
	promptCols    map[string]bool

	obsMemory string // observations: memory_session_id (or sdk_session_id); "" = no table
	obsCols   map[string]bool

	sumMemory string // session_summaries: likewise
	sumCols   map[string]bool

	toolUses bool // tool_uses with observation_id
}

func (m *ClaudeMemDB) schema(ctx context.Context) (*schema, error) {
	conn, err := m.db.Conn(ctx)
	if err != nil {
		return nil, m.wrap(err)
	}
	defer conn.Close()
	return m.schemaIn(ctx, conn)
}

// schemaIn returns the database's schema as q sees it, from the cache when
// the schema cookie has not moved.
func (m *ClaudeMemDB) schemaIn(ctx context.Context, q querier) (*schema, error) {
	var cookie int64
	if err := q.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&cookie); err != nil {
		return nil, m.wrap(err)
	}
	m.mu.Lock()
	cached := m.cached
	if m.cookie != cookie {
		cached = nil
	}
	m.mu.Unlock()
	if cached != nil {
		return cached, nil
	}
	s, err := readSchema(ctx, q, m.path)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.cached, m.cookie = s, cookie
	m.mu.Unlock()
	return s, nil
}

// readSchema introspects the tables bottled reads. The result is never
// modified after.
func readSchema(ctx context.Context, q querier, path string) (*schema, error) {
	cols := func(table string) (map[string]bool, error) {
		out := map[string]bool{}
		err := eachRow(ctx, q, "SELECT name FROM pragma_table_info(?)", []any{table}, func(scan scanFunc) error {
			var name string
			if err := scan(&name); err != nil {
				return err
			}
			out[name] = true
			return nil
		})
		return out, err
	}
	s := &schema{}
	var err error
	if s.sessCols, err = cols("sdk_sessions"); err != nil {
		return nil, shapeErr(path, err)
	}
	if len(s.sessCols) == 0 {
		return nil, fmt.Errorf("%w: %s has no sdk_sessions table", ErrClaudeMemShape, path)
	}
	s.sessContent = pick(s.sessCols, "content_session_id", "claude_session_id")
	s.sessMemory = pick(s.sessCols, "memory_session_id", "sdk_session_id")
	if s.sessContent == "" || s.sessMemory == "" || !s.sessCols["id"] {
		return nil, fmt.Errorf("%w: %s: sdk_sessions lacks the session id columns", ErrClaudeMemShape, path)
	}
	s.sessPlatform = s.sessCols["platform_source"]
	if s.promptCols, err = cols("user_prompts"); err != nil {
		return nil, shapeErr(path, err)
	}
	s.promptContent = pick(s.promptCols, "content_session_id", "claude_session_id")
	s.promptSessDB = s.promptCols["session_db_id"]
	if s.obsCols, err = cols("observations"); err != nil {
		return nil, shapeErr(path, err)
	}
	s.obsMemory = pick(s.obsCols, "memory_session_id", "sdk_session_id")
	if s.sumCols, err = cols("session_summaries"); err != nil {
		return nil, shapeErr(path, err)
	}
	s.sumMemory = pick(s.sumCols, "memory_session_id", "sdk_session_id")
	tu, err := cols("tool_uses")
	if err != nil {
		return nil, shapeErr(path, err)
	}
	s.toolUses = tu["tool_use_id"] && tu["observation_id"] && tu["content_session_id"]
	if vc, err := cols("schema_versions"); err == nil && vc["version"] {
		var v sql.NullInt64
		if err := q.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_versions").Scan(&v); err == nil {
			s.version = int(v.Int64)
		}
	}
	return s, nil
}

func pick(cols map[string]bool, names ...string) string {
	for _, n := range names {
		if cols[n] {
			return n
		}
	}
	return ""
}

func shapeErr(path string, err error) error {
	return fmt.Errorf("%w: %s: %v", ErrClaudeMemShape, path, err)
}

// wrap gives a driver error context, classifying a file that is not a
// database, or a damaged one, as a shape problem (by SQLite's error code,
// as the index does).
func (m *ClaudeMemDB) wrap(err error) error {
	if errors.Is(err, sqlite3.NOTADB) || errors.Is(err, sqlite3.CORRUPT) {
		return shapeErr(m.path, err)
	}
	return fmt.Errorf("read memory db %s: %w", m.path, err)
}

// querier is what both *sql.Conn and *sql.Tx offer.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// scanFunc copies the columns of the current row into dest, as
// (*sql.Rows).Scan.
type scanFunc func(dest ...any) error

// eachRow runs query and calls row with the scanner of each row it
// returns, stopping at the first error.
func eachRow(ctx context.Context, q querier, query string, args []any, row func(scanFunc) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

// SchemaVersion returns the highest version in claude-mem's schema ledger
// (0 if the database has none).
func (m *ClaudeMemDB) SchemaVersion(ctx context.Context) (int, error) {
	s, err := m.schema(ctx)
	if err != nil {
		return 0, err
	}
	return s.version, nil
}

// Session reads what the database holds about a Claude Code session, in
// one short read-only transaction. It returns nil, nil if the database
// does not know the session.
func (m *ClaudeMemDB) Session(ctx context.Context, contentSessionID string) (*ClaudeMem, error) {
	tx, err := m.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, m.wrap(err)
	}
	defer tx.Rollback() // read-only: nothing to commit
	s, err := m.schemaIn(ctx, tx)
	if err != nil {
		return nil, err
	}
	r := sessionReader{ctx: ctx, tx: tx, s: s, path: m.path}
	mem, err := r.read(contentSessionID)
	if err != nil {
		return nil, m.wrap(err)
	}
	return mem, nil
}

type sessionReader struct {
	ctx  context.Context
	tx   *sql.Tx
	s    *schema
	path string
}

// sessionRow is the sdk_sessions row of a Claude Code session.
type sessionRow struct {
	dbID    int64
	memID   string
	project string
	started time.Time
}

// session resolves a content session id to its sdk_sessions row, preferring
// Claude Code's own row when other platforms share the id. It returns nil
// if there is none.
func (r *sessionReader) session(content string) (*sessionRow, error) {
	s := r.s
	order := "id"
	if s.sessPlatform {
		order = "(COALESCE(NULLIF(platform_source, ''), 'claude') = 'claude') DESC, id"
	}
	var (
		row            sessionRow
		memID, project sql.NullString
		started        sql.NullInt64
	)
	err := r.tx.QueryRowContext(r.ctx, fmt.Sprintf(
		`SELECT id, %s, %s, %s FROM sdk_sessions WHERE %s = ? AND COALESCE(%s, '') != ? ORDER BY %s LIMIT 1`,
		s.sessMemory, col(s.sessCols, "project"), col(s.sessCols, "started_at_epoch"),
		s.sessContent, col(s.sessCols, "project"), order),
		content, observerProject).Scan(&row.dbID, &memID, &project, &started)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read sdk_sessions: %w", err)
	}
	row.memID, row.project = memID.String, project.String
	if started.Valid && started.Int64 > 0 {
		row.started = time.UnixMilli(started.Int64).UTC()
	}
	return &row, nil
}

func (r *sessionReader) read(content string) (*ClaudeMem, error) {
	row, err := r.session(content)
	if row == nil || err != nil {
		return nil, err
	}
	mem := &ClaudeMem{ContentSessionID: content, MemorySessionID: row.memID, Project: row.project, Started: row.started}
	mem.Cursor = r.baseCursor(row)
	if err := r.prompts(mem, content, row.dbID); err != nil {
		return nil, err
	}
	if row.memID != "" {
		if err := r.observations(mem); err != nil {
			return nil, err
		}
		if err := r.summaries(mem); err != nil {
			return nil, err
		}
	}
	if r.s.toolUses {
		if err := r.toolUses(mem, content); err != nil {
			return nil, err
		}
	}
	return mem, nil
}

func (r *sessionReader) baseCursor(row *sessionRow) ClaudeMemCursor {
	c := ClaudeMemCursor{MemorySessionID: row.memID}
	if info, err := os.Stat(r.path); err == nil {
		c.DB = FileIDOf(info)
	}
	return c
}

// Cursor returns a session's row maxima, the same ClaudeMemCursor Session
// reports, without reading the rows. It returns false if the database does
// not know the session.
func (m *ClaudeMemDB) Cursor(ctx context.Context, contentSessionID string) (ClaudeMemCursor, bool, error) {
	tx, err := m.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return ClaudeMemCursor{}, false, m.wrap(err)
	}
	defer tx.Rollback() // read-only: nothing to commit
	s, err := m.schemaIn(ctx, tx)
	if err != nil {
		return ClaudeMemCursor{}, false, err
	}
	r := sessionReader{ctx: ctx, tx: tx, s: s, path: m.path}
	row, err := r.session(contentSessionID)
	if row == nil || err != nil {
		return ClaudeMemCursor{}, false, m.wrapNil(err)
	}
	c := r.baseCursor(row)
	var queries []struct {
		dst   *int64
		query string
		args  []any
	}
	add := func(dst *int64, query string, args ...any) {
		queries = append(queries, struct {
			dst   *int64
			query string
			args  []any
		}{dst, query, args})
	}
	if s.promptContent != "" {
		if s.promptSessDB {
			add(&c.Prompt, "SELECT MAX(id) FROM user_prompts WHERE session_db_id = ? OR (session_db_id IS NULL AND "+s.promptContent+" = ?)", row.dbID, contentSessionID)
		} else {
			add(&c.Prompt, "SELECT MAX(id) FROM user_prompts WHERE "+s.promptContent+" = ?", contentSessionID)
		}
	}
	if row.memID != "" && s.obsMemory != "" {
		add(&c.Observation, "SELECT MAX(id) FROM observations WHERE "+s.obsMemory+" = ?", row.memID)
	}
	if row.memID != "" && s.sumMemory != "" {
		add(&c.Summary, "SELECT MAX(id) FROM session_summaries WHERE "+s.sumMemory+" = ?", row.memID)
	}
	if s.toolUses {
		add(&c.ToolUseLinks, "SELECT COUNT(*) FROM tool_uses WHERE content_session_id = ? AND observation_id IS NOT NULL", contentSessionID)
	}
	for _, q := range queries {
		var v sql.NullInt64
		if err := tx.QueryRowContext(ctx, q.query, q.args...).Scan(&v); err != nil {
			return ClaudeMemCursor{}, false, m.wrap(err)
		}
		*q.dst = v.Int64
	}
	return c, true, nil
}

func (m *ClaudeMemDB) wrapNil(err error) error {
	if err == nil {
		return nil
	}
	return m.wrap(err)
}

// col returns the column name if the table has it, else NULL, so that one
// query text serves every schema version.
func col(cols map[string]bool, name string) string {
	if cols[name] {
		return name
	}
	return "NULL"
}

// capped selects at most n+1 characters of a text column: the one past
// the cap tells endOnWord whether the cap split a word.
func capped(cols map[string]bool, name string, n int) string {
	if !cols[name] {
		return "NULL"
	}
	return fmt.Sprintf("substr(%s, 1, %d)", name, n+1)
}

// endOnWord cuts s, selected by capped, to at most n characters, at the
// end of the last word the cap left whole, and marks the cut with "…".
// The head of a word the cap split is dropped: it may be the head of a
// credential, which the redaction rules would not know for one without
// its tail.
func endOnWord(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	kept := textcut.Head(s, n, textcut.Runes)
	past, _ := utf8.DecodeRuneInString(s[len(kept):])
	return textcut.WholeWords(kept, !unicode.IsSpace(past))
}

// cutByClaudeMem reports whether a stored prompt looks cut by claude-mem's
// cap: exactly 4,000 UTF-16 units ending in "…". (A prompt of exactly that
// length ending in "…" would look the same; no column records the cut.)
func cutByClaudeMem(s string) bool {
	return strings.HasSuffix(s, "…") && textcut.Len(s, textcut.UTF16) == claudeMemPromptUnits
}

// claudeMemPromptUnits is claude-mem's cap on a stored prompt, in UTF-16
// units, its "…" included (since 13.5.0).
const claudeMemPromptUnits = 4000

// wholeWordsOfCut is a prompt claude-mem cut without the word its cap
// split, if it split one, ended with "…": the head of a credential is no
// credential to the redaction rules, so it would be shown. The cap leaves
// no sign of what followed, so a word the cut ends on counts as split.
func wholeWordsOfCut(s string) string {
	kept := strings.TrimSuffix(s, "…")
	last, _ := utf8.DecodeLastRuneInString(kept)
	return textcut.WholeWords(kept, !unicode.IsSpace(last))
}

func (r *sessionReader) prompts(mem *ClaudeMem, content string, dbID int64) error {
	s := r.s
	if s.promptContent == "" && !s.promptSessDB {
		return nil // no user_prompts table (claude-mem < 4.2.3)
	}
	where, args := s.promptContent+" = ?", []any{content}
	if s.promptSessDB {
		where = "(session_db_id = ? OR (session_db_id IS NULL AND " + s.promptContent + " = ?))"
		args = []any{dbID, content}
	}
	query := fmt.Sprintf(`SELECT id, %s, %s, length(%s) > %d, %s FROM user_prompts WHERE %s ORDER BY %s, id`,
		col(s.promptCols, "prompt_number"), capped(s.promptCols, "prompt_text", maxPromptChars),
		col(s.promptCols, "prompt_text"), maxPromptChars, col(s.promptCols, "created_at_epoch"),
		where, col(s.promptCols, "prompt_number"))
	err := eachRow(r.ctx, r.tx, query, args, func(scan scanFunc) error {
		var (
			p       Prompt
			num     sql.NullInt64
			text    sql.NullString
			clipped sql.NullBool
			created sql.NullInt64
		)
		if err := scan(&p.ID, &num, &text, &clipped, &created); err != nil {
			return err
		}
		mem.Cursor.Prompt = max(mem.Cursor.Prompt, p.ID)
		p.Number, p.Text, p.Clipped = num.Int64, endOnWord(text.String, maxPromptChars), clipped.Bool
		p.Created = millis(created)
		if isObserverJunk(p.Text) {
			return nil
		}
		if cutByClaudeMem(p.Text) {
			p.Text, p.CutByClaudeMem = wholeWordsOfCut(p.Text), true
		}
		mem.Prompts = append(mem.Prompts, p)
		return nil
	})
	return tableErr("user_prompts", err)
}

// tableErr says which table a read failed in.
func tableErr(table string, err error) error {
	if err != nil {
		return fmt.Errorf("read %s: %w", table, err)
	}
	return nil
}

func (r *sessionReader) observations(mem *ClaudeMem) error {
	return r.memoryRows(mem, "observations", r.s.obsMemory, r.s.obsCols,
		[]string{"type", "title", "subtitle", "narrative", "text"},
		func(id int64, v []string, prompt int64, created time.Time) {
			mem.Observations = append(mem.Observations, Observation{ID: id,
				Type: v[0], Title: v[1], Subtitle: v[2], Narrative: v[3], Text: v[4],
				PromptNumber: prompt, Created: created})
			mem.Cursor.Observation = max(mem.Cursor.Observation, id)
		})
}

func (r *sessionReader) summaries(mem *ClaudeMem) error {
	return r.memoryRows(mem, "session_summaries", r.s.sumMemory, r.s.sumCols,
		[]string{"request", "investigated", "learned", "completed", "next_steps", "notes"},
		func(id int64, v []string, prompt int64, created time.Time) {
			mem.Summaries = append(mem.Summaries, Summary{ID: id,
				Request: v[0], Investigated: v[1], Learned: v[2], Completed: v[3], NextSteps: v[4], Notes: v[5],
				PromptNumber: prompt, Created: created})
			mem.Cursor.Summary = max(mem.Cursor.Summary, id)
		})
}

// memoryRows reads the rows of table that the observer wrote for the
// memory session (memCol is the column naming it; "" when the table is
// missing), oldest first. row gets each row's id, the values of the text
// columns named, in their order (each capped at maxFieldChars, "" when
// NULL or missing from this schema), its prompt number and its time.
func (r *sessionReader) memoryRows(mem *ClaudeMem, table, memCol string, cols map[string]bool, texts []string,
	row func(id int64, text []string, prompt int64, created time.Time)) error {
	if memCol == "" {
		return nil
	}
	selected := make([]string, len(texts))
	for i, name := range texts {
		selected[i] = capped(cols, name, maxFieldChars)
	}
	query := fmt.Sprintf(`SELECT id, %s, %s, %s FROM %s WHERE %s = ? ORDER BY %s, id`,
		strings.Join(selected, ", "), col(cols, "prompt_number"), col(cols, "created_at_epoch"),
		table, memCol, col(cols, "created_at_epoch"))
	err := eachRow(r.ctx, r.tx, query, []any{mem.MemorySessionID}, func(scan scanFunc) error {
		var (
			id           int64
			values       = make([]sql.NullString, len(texts))
			num, created sql.NullInt64
		)
		dest := []any{&id}
		for i := range values {
			dest = append(dest, &values[i])
		}
		if err := scan(append(dest, &num, &created)...); err != nil {
			return err
		}
		text := make([]string, len(values))
		for i, v := range values {
			text[i] = endOnWord(v.String, maxFieldChars)
		}
		row(id, text, num.Int64, millis(created))
		return nil
	})
	return tableErr(table, err)
}

func (r *sessionReader) toolUses(mem *ClaudeMem, content string) error {
	const query = `SELECT tool_use_id, observation_id FROM tool_uses WHERE content_session_id = ? AND observation_id IS NOT NULL ORDER BY id`
	err := eachRow(r.ctx, r.tx, query, []any{content}, func(scan scanFunc) error {
		var id string
		var obs int64
		if err := scan(&id, &obs); err != nil {
			return err
		}
		if mem.ToolUses == nil {
			mem.ToolUses = map[string]int64{}
		}
		mem.ToolUses[id] = obs
		mem.Cursor.ToolUseLinks++
		return nil
	})
	return tableErr("tool_uses", err)
}

func millis(v sql.NullInt64) time.Time {
	if !v.Valid || v.Int64 <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

// observerJunkPrefixes open rows that claude-mem's observer wrote into
// user_prompts in 12.1.2–12.3.9 (issue #2104); old databases still hold them.
var observerJunkPrefixes = []string{
	"<observed_from_primary_session>", "You are a Claude-Mem, a specialized observer tool", "Hello memory agent",
}

func isObserverJunk(text string) bool {
	t := strings.TrimSpace(text)
	if hasAnyPrefix(t, observerJunkPrefixes) {
		return true
	}
	// A prompt that is nothing but one task notification (or, from 2.0.7x,
	// one background shell's or agent's) is the harness talking (claude-mem
	// skips task notifications since 12.4.3).
	for _, tag := range noticeTags {
		if strings.HasPrefix(t, "<"+tag) && strings.HasSuffix(t, "</"+tag+">") {
			inner := t[len("<"+tag) : len(t)-len("</"+tag+">")]
			return !strings.Contains(inner, "<"+tag) && !strings.Contains(inner, "</"+tag)
		}
	}
	return false
}

// noticeTags wrap the notices Claude Code writes as user text when a
// background task, shell or agent finishes.
var noticeTags = []string{"task-notification", "bash-notification", "agent-notification"}
