package memwriter

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	_ "github.com/ncruces/go-sqlite3/driver" // registers "sqlite3"
)

// LegacySession is one session of a pre-rename claude-mem database (before
// v8.2.6, schema migration v17), when the content session id was called
// claude_session_id and the memory session id sdk_session_id. Zero values
// are stored as NULL where the column allows it, and an ID of 0 lets SQLite
// assign the row id.
type LegacySession struct {
	Session      LegacySDKSession
	Prompts      []LegacyPrompt
	Observations []LegacyObservation
	Summaries    []LegacySummary
}

// LegacySDKSession is an sdk_sessions row.
type LegacySDKSession struct {
	ID               int64
	ClaudeSessionID  string // today's content_session_id
	SDKSessionID     string // today's memory_session_id
	Project          string
	UserPrompt       string
	StartedAtEpoch   int64  // ms
	CompletedAtEpoch int64  // ms
	Status           string // active (default), completed or failed
}

// LegacyPrompt is a user_prompts row of the session; it is keyed by
// claude_session_id (there was no session_db_id yet).
type LegacyPrompt struct {
	ID             int64
	PromptNumber   int
	Text           string
	CreatedAtEpoch int64 // ms
}

// LegacyObservation is an observations row of the session. Rows written
// before the structured fields existed have only Text.
type LegacyObservation struct {
	ID             int64
	Type           string // decision, bugfix, feature, refactor, discovery (default) or change
	Text           string
	Title          string
	Subtitle       string
	Narrative      string
	Facts          []string // nil: NULL, else a JSON array
	Concepts       []string
	FilesRead      []string
	FilesModified  []string
	PromptNumber   int
	CreatedAtEpoch int64 // ms
}

// LegacySummary is a session_summaries row of the session.
type LegacySummary struct {
	ID             int64
	Request        string
	Investigated   string
	Learned        string
	Completed      string
	NextSteps      string
	Notes          string
	FilesRead      []string
	FilesEdited    []string
	PromptNumber   int
	CreatedAtEpoch int64 // ms
}

// legacySchema is the shape a claude-mem database had at ledger v10, the
// last state before the rename: migration004's tables as later migrations
// left them (v5 worker_port and v6 prompt_counter/prompt_number appended,
// v7 summaries no longer unique per session, v8 structured observation
// fields, v9 nullable text, v10 user_prompts). The FTS5 tables of v10 are
// left out: a reader never touches them.
const legacySchema = `
CREATE TABLE IF NOT EXISTS schema_versions (
  id INTEGER PRIMARY KEY,
  version INTEGER UNIQUE NOT NULL,
  applied_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sdk_sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  claude_session_id TEXT UNIQUE NOT NULL,
  sdk_session_id TEXT UNIQUE,
  project TEXT NOT NULL,
  user_prompt TEXT,
  started_at TEXT NOT NULL,
  started_at_epoch INTEGER NOT NULL,
  completed_at TEXT,
  completed_at_epoch INTEGER,
  status TEXT CHECK(status IN ('active', 'completed', 'failed')) NOT NULL DEFAULT 'active',
  worker_port INTEGER,
  prompt_counter INTEGER DEFAULT 0
);
CREATE INDEX IF NOT EXISTS idx_sdk_sessions_claude_id ON sdk_sessions(claude_session_id);
CREATE INDEX IF NOT EXISTS idx_sdk_sessions_sdk_id ON sdk_sessions(sdk_session_id);
CREATE INDEX IF NOT EXISTS idx_sdk_sessions_project ON sdk_sessions(project);
CREATE INDEX IF NOT EXISTS idx_sdk_sessions_status ON sdk_sessions(status);
CREATE INDEX IF NOT EXISTS idx_sdk_sessions_started ON sdk_sessions(started_at_epoch DESC);
CREATE TABLE IF NOT EXISTS observations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  sdk_session_id TEXT NOT NULL,
  project TEXT NOT NULL,
  text TEXT,
  type TEXT NOT NULL CHECK(type IN ('decision', 'bugfix', 'feature', 'refactor', 'discovery', 'change')),
  title TEXT,
  subtitle TEXT,
  facts TEXT,
  narrative TEXT,
  concepts TEXT,
  files_read TEXT,
  files_modified TEXT,
  prompt_number INTEGER,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY(sdk_session_id) REFERENCES sdk_sessions(sdk_session_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS idx_observations_sdk_session ON observations(sdk_session_id);
CREATE INDEX IF NOT EXISTS idx_observations_project ON observations(project);
CREATE INDEX IF NOT EXISTS idx_observations_type ON observations(type);
CREATE INDEX IF NOT EXISTS idx_observations_created ON observations(created_at_epoch DESC);
CREATE TABLE IF NOT EXISTS session_summaries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  sdk_session_id TEXT NOT NULL,
  project TEXT NOT NULL,
  request TEXT,
  investigated TEXT,
  learned TEXT,
  completed TEXT,
  next_steps TEXT,
  files_read TEXT,
  files_edited TEXT,
  notes TEXT,
  prompt_number INTEGER,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY(sdk_session_id) REFERENCES sdk_sessions(sdk_session_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS idx_session_summaries_sdk_session ON session_summaries(sdk_session_id);
CREATE INDEX IF NOT EXISTS idx_session_summaries_project ON session_summaries(project);
CREATE INDEX IF NOT EXISTS idx_session_summaries_created ON session_summaries(created_at_epoch DESC);
CREATE TABLE IF NOT EXISTS user_prompts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  claude_session_id TEXT NOT NULL,
  prompt_number INTEGER NOT NULL,
  prompt_text TEXT NOT NULL,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY(claude_session_id) REFERENCES sdk_sessions(claude_session_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS idx_user_prompts_claude_session ON user_prompts(claude_session_id);
CREATE INDEX IF NOT EXISTS idx_user_prompts_created ON user_prompts(created_at_epoch DESC);
CREATE INDEX IF NOT EXISTS idx_user_prompts_prompt_number ON user_prompts(prompt_number);
CREATE INDEX IF NOT EXISTS idx_user_prompts_lookup ON user_prompts(claude_session_id, prompt_number);
INSERT OR IGNORE INTO schema_versions (version, applied_at) VALUES
  (4, '2025-10-01T00:00:00.000Z'), (5, '2025-10-01T00:00:00.000Z'), (6, '2025-10-01T00:00:00.000Z'),
  (7, '2025-10-01T00:00:00.000Z'), (8, '2025-10-01T00:00:00.000Z'), (9, '2025-10-01T00:00:00.000Z'),
  (10, '2025-10-01T00:00:00.000Z');
`

// BuildLegacyDB writes s into a pre-rename claude-mem database at path, in
// WAL mode like the real one. It creates the file and schema if needed, so
// calling it again with another session adds that session.
func BuildLegacyDB(path string, s LegacySession) (err error) {
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		return fmt.Errorf("build legacy claude-mem db: %w", err)
	}
	defer func() {
		if cerr := db.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("build legacy claude-mem db: close: %w", cerr))
		}
	}()
	// One connection: the pragmas below are per connection.
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;" + legacySchema); err != nil {
		return fmt.Errorf("build legacy claude-mem db: schema: %w", err)
	}

	tx, err := db.Begin()
	if err != nil {
		return fmt.Errorf("build legacy claude-mem db: %w", err)
	}
	defer tx.Rollback() // no-op after Commit
	if err := insertLegacy(tx, s); err != nil {
		return fmt.Errorf("build legacy claude-mem db: session %q: %w", s.Session.ClaudeSessionID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("build legacy claude-mem db: commit: %w", err)
	}
	return nil
}

func insertLegacy(tx *sql.Tx, s LegacySession) error {
	ss := s.Session
	status := ss.Status
	if status == "" {
		status = "active"
	}
	if _, err := tx.Exec(`INSERT INTO sdk_sessions
		(id, claude_session_id, sdk_session_id, project, user_prompt, started_at, started_at_epoch,
		 completed_at, completed_at_epoch, status)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id(ss.ID), ss.ClaudeSessionID, text(ss.SDKSessionID), ss.Project, text(ss.UserPrompt),
		iso(ss.StartedAtEpoch), ss.StartedAtEpoch, isoOrNull(ss.CompletedAtEpoch), epochOrNull(ss.CompletedAtEpoch),
		status); err != nil {
		return fmt.Errorf("sdk_sessions: %w", err)
	}
	for _, p := range s.Prompts {
		if _, err := tx.Exec(`INSERT INTO user_prompts
			(id, claude_session_id, prompt_number, prompt_text, created_at, created_at_epoch)
			VALUES (?, ?, ?, ?, ?, ?)`,
			id(p.ID), ss.ClaudeSessionID, p.PromptNumber, p.Text, iso(p.CreatedAtEpoch), p.CreatedAtEpoch); err != nil {
			return fmt.Errorf("user_prompts #%d: %w", p.PromptNumber, err)
		}
	}
	for _, o := range s.Observations {
		typ := o.Type
		if typ == "" {
			typ = "discovery"
		}
		if _, err := tx.Exec(`INSERT INTO observations
			(id, sdk_session_id, project, text, type, title, subtitle, facts, narrative, concepts,
			 files_read, files_modified, prompt_number, created_at, created_at_epoch)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id(o.ID), ss.SDKSessionID, ss.Project, text(o.Text), typ, text(o.Title), text(o.Subtitle),
			jsonList(o.Facts), text(o.Narrative), jsonList(o.Concepts), jsonList(o.FilesRead),
			jsonList(o.FilesModified), number(o.PromptNumber), iso(o.CreatedAtEpoch), o.CreatedAtEpoch); err != nil {
			return fmt.Errorf("observation %q: %w", o.Title+o.Text, err)
		}
	}
	for _, m := range s.Summaries {
		if _, err := tx.Exec(`INSERT INTO session_summaries
			(id, sdk_session_id, project, request, investigated, learned, completed, next_steps,
			 files_read, files_edited, notes, prompt_number, created_at, created_at_epoch)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id(m.ID), ss.SDKSessionID, ss.Project, text(m.Request), text(m.Investigated), text(m.Learned),
			text(m.Completed), text(m.NextSteps), jsonList(m.FilesRead), jsonList(m.FilesEdited),
			text(m.Notes), number(m.PromptNumber), iso(m.CreatedAtEpoch), m.CreatedAtEpoch); err != nil {
			return fmt.Errorf("summary %q: %w", m.Request, err)
		}
	}
	return nil
}

// iso formats an epoch in ms the way claude-mem stores created_at
// (JavaScript's toISOString).
func iso(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

func isoOrNull(ms int64) any {
	if ms == 0 {
		return nil
	}
	return iso(ms)
}

func epochOrNull(ms int64) any {
	if ms == 0 {
		return nil
	}
	return ms
}

// id lets SQLite assign a row id for 0.
func id(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}

func text(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// number stores 0 as NULL, as claude-mem does for prompt numbers.
func number(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

func jsonList(v []string) any {
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v) // a []string always marshals
	return string(b)
}
