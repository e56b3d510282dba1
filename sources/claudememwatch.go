package sources

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// ChangeCursor marks how far a ClaudeMemWatch has seen the database: the
// largest row ids of the tables a bottle reads, and the sessions still
// waiting for their memory session id (claude-mem registers it after the
// first prompt; observations can only follow it).
type ChangeCursor struct {
	Session, Prompt, Observation, Summary, ToolUse int64
	Unregistered                                   []int64 // sdk_sessions ids
}

// ClaudeMemWatch tells which sessions gained rows in claude-mem's database. It
// holds one connection for its lifetime, because SQLite's data_version is
// per connection, but never a transaction between calls.
//
// A ClaudeMemWatch is not safe for concurrent use.
type ClaudeMemWatch struct {
	m       *ClaudeMemDB
	conn    *sql.Conn
	last    int64 // data_version at the previous Changed
	version int   // schema ledger version seen by the last Since or Cursor
}

// SchemaVersion is claude-mem's schema version as of the last Since or
// Cursor. (A database that appeared while the daemon watched may still be
// migrating when it is first opened.)
func (w *ClaudeMemWatch) SchemaVersion() int { return w.version }

// Watch pins a connection for change detection. Close it when done.
func (m *ClaudeMemDB) Watch(ctx context.Context) (*ClaudeMemWatch, error) {
	conn, err := m.db.Conn(ctx)
	if err != nil {
		return nil, m.wrap(err)
	}
	w := &ClaudeMemWatch{m: m, conn: conn, last: -1}
	return w, nil
}

// Close releases the pinned connection.
func (w *ClaudeMemWatch) Close() error { return w.conn.Close() }

// Changed reports whether another connection committed since the last
// call (the first call reports true). A checkpoint also counts, so a true
// is a hint to look, not proof of new rows.
func (w *ClaudeMemWatch) Changed(ctx context.Context) (bool, error) {
	var v int64
	if err := w.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return false, w.m.wrap(err)
	}
	changed := v != w.last
	w.last = v
	return changed, nil
}

// Cursor returns the database's current maxima: a starting point from
// which Since reports only what is written afterwards.
func (w *ClaudeMemWatch) Cursor(ctx context.Context) (ChangeCursor, error) {
	_, cur, err := w.since(ctx, nil)
	return cur, err
}

// Since returns the content session ids (Claude Code sessions) that own
// rows written after cur — prompts, observations, summaries, tool uses, or
// a memory session id registered late — and the cursor to pass next time.
func (w *ClaudeMemWatch) Since(ctx context.Context, cur ChangeCursor) ([]string, ChangeCursor, error) {
	return w.since(ctx, &cur)
}

func (w *ClaudeMemWatch) since(ctx context.Context, cur *ChangeCursor) ([]string, ChangeCursor, error) {
	tx, err := w.conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, ChangeCursor{}, w.m.wrap(err)
	}
	defer tx.Rollback() // read-only: nothing to commit
	s, err := w.m.schemaIn(ctx, tx)
	if err != nil {
		return nil, ChangeCursor{}, err
	}
	w.version = s.version
	c := changeReader{ctx: ctx, tx: tx, s: s, found: map[string]bool{}}
	next, err := c.read(cur)
	if err != nil {
		return nil, ChangeCursor{}, w.m.wrap(err)
	}
	ids := make([]string, 0, len(c.found))
	for id := range c.found {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, next, nil
}

type changeReader struct {
	ctx   context.Context
	tx    *sql.Tx
	s     *schema
	found map[string]bool
}

// claudeOnly restricts sdk_sessions to Claude Code's own sessions.
func (c *changeReader) claudeOnly(alias string) string {
	if !c.s.sessPlatform {
		return "1"
	}
	return "COALESCE(NULLIF(" + alias + "platform_source, ''), 'claude') = 'claude'"
}

func (c *changeReader) read(cur *ChangeCursor) (ChangeCursor, error) {
	s := c.s
	var next ChangeCursor
	var err error
	if next.Session, err = c.max("sdk_sessions"); err != nil {
		return next, err
	}
	if s.promptContent != "" {
		if next.Prompt, err = c.max("user_prompts"); err != nil {
			return next, err
		}
	}
	if s.obsMemory != "" {
		if next.Observation, err = c.max("observations"); err != nil {
			return next, err
		}
	}
	if s.sumMemory != "" {
		if next.Summary, err = c.max("session_summaries"); err != nil {
			return next, err
		}
	}
	if s.toolUses {
		if next.ToolUse, err = c.max("tool_uses"); err != nil {
			return next, err
		}
	}
	since := ChangeCursor{Session: next.Session, Prompt: next.Prompt, Observation: next.Observation, Summary: next.Summary, ToolUse: next.ToolUse}
	if cur != nil {
		since = *cur
	}
	if next.Unregistered, err = c.sessions(since, cur != nil); err != nil {
		return next, err
	}
	if cur == nil {
		return next, nil
	}
	queries := []struct {
		ok    bool
		query string
		after int64
	}{
		{s.promptContent != "", fmt.Sprintf(`SELECT DISTINCT %s FROM user_prompts WHERE id > ?`, s.promptContent), since.Prompt},
		{s.obsMemory != "", fmt.Sprintf(`SELECT DISTINCT s.%s FROM observations o JOIN sdk_sessions s ON s.%s = o.%s WHERE o.id > ? AND %s`,
			s.sessContent, s.sessMemory, s.obsMemory, c.claudeOnly("s.")), since.Observation},
		{s.sumMemory != "", fmt.Sprintf(`SELECT DISTINCT s.%s FROM session_summaries x JOIN sdk_sessions s ON s.%s = x.%s WHERE x.id > ? AND %s`,
			s.sessContent, s.sessMemory, s.sumMemory, c.claudeOnly("s.")), since.Summary},
		{s.toolUses, `SELECT DISTINCT content_session_id FROM tool_uses WHERE id > ?`, since.ToolUse},
	}
	for _, q := range queries {
		if q.ok {
			if err := c.collect(q.query, q.after); err != nil {
				return next, err
			}
		}
	}
	return next, nil
}

func (c *changeReader) max(table string) (int64, error) {
	var v sql.NullInt64
	if err := c.tx.QueryRowContext(c.ctx, "SELECT MAX(id) FROM "+table).Scan(&v); err != nil {
		return 0, fmt.Errorf("read %s: %w", table, err)
	}
	return v.Int64, nil
}

func (c *changeReader) collect(query string, after int64) error {
	return eachRow(c.ctx, c.tx, query, []any{after}, func(scan scanFunc) error {
		var id sql.NullString
		if err := scan(&id); err != nil {
			return err
		}
		if id.String != "" {
			c.found[id.String] = true
		}
		return nil
	})
}

// maxWaiting bounds how many sessions without a memory session id are
// followed. Sessions whose observer never started stay that way forever;
// only recent ones (the highest ids) can still be registered.
const maxWaiting = 256

// sessions reads the sdk_sessions rows that are new since cur or were
// waiting for a memory session id, reports those that changed, and returns
// the ids still waiting.
func (c *changeReader) sessions(cur ChangeCursor, report bool) ([]int64, error) {
	s := c.s
	where := "id > ?"
	args := []any{cur.Session}
	if report && len(cur.Unregistered) > 0 {
		where += " OR id IN (" + strings.TrimSuffix(strings.Repeat("?,", len(cur.Unregistered)), ",") + ")"
		for _, id := range cur.Unregistered {
			args = append(args, id)
		}
	}
	if !report {
		where = s.sessMemory + " IS NULL" // starting: remember who is waiting
		args = nil
	}
	query := fmt.Sprintf(`SELECT id, %s, %s IS NOT NULL FROM sdk_sessions WHERE (%s) AND %s ORDER BY id DESC LIMIT %d`,
		s.sessContent, s.sessMemory, where, c.claudeOnly(""), maxWaiting)
	var waiting []int64
	err := eachRow(c.ctx, c.tx, query, args, func(scan scanFunc) error {
		var (
			id         int64
			content    sql.NullString
			registered bool
		)
		if err := scan(&id, &content, &registered); err != nil {
			return err
		}
		if !registered {
			waiting = append(waiting, id)
		}
		if report && (registered || id > cur.Session) && content.String != "" {
			c.found[content.String] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return waiting, nil
}
