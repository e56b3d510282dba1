package memwriter

import (
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBuildLegacyDB(t *testing.T) {
	const t0 = int64(1_735_000_000_000) // 2024-12-24, ms
	path := filepath.Join(t.TempDir(), "claude-mem.db")
	s := LegacySession{
		Session: LegacySDKSession{
			ClaudeSessionID: "legacy-1", SDKSessionID: "sdk-1", Project: "old",
			UserPrompt: "first", StartedAtEpoch: t0, CompletedAtEpoch: t0 + 60_000, Status: "completed",
		},
		Prompts: []LegacyPrompt{
			{PromptNumber: 1, Text: "first", CreatedAtEpoch: t0},
			{PromptNumber: 2, Text: "second", CreatedAtEpoch: t0 + 1000},
		},
		Observations: []LegacyObservation{
			{ID: 500, Type: "feature", Title: "Added X", Narrative: "X is new. More.", Facts: []string{"f"},
				FilesRead: []string{}, PromptNumber: 1, CreatedAtEpoch: t0 + 10},
			{Text: "free-text body from before titles existed", CreatedAtEpoch: t0 + 20},
		},
		Summaries: []LegacySummary{{Request: "do X", Completed: "did X", PromptNumber: 2, CreatedAtEpoch: t0 + 30}},
	}
	if err := BuildLegacyDB(path, s); err != nil {
		t.Fatal(err)
	}
	// A second session goes into the same file.
	if err := BuildLegacyDB(path, LegacySession{Session: LegacySDKSession{
		ClaudeSessionID: "legacy-2", Project: "old", StartedAtEpoch: t0,
	}}); err != nil {
		t.Fatal(err)
	}

	db := OpenRO(t, path)

	t.Run("schema", func(t *testing.T) {
		tests := []struct {
			table       string
			has, hasNot []string
		}{
			{"sdk_sessions", []string{"claude_session_id", "sdk_session_id", "user_prompt", "status"}, []string{"content_session_id", "memory_session_id", "platform_source"}},
			{"observations", []string{"sdk_session_id", "text", "title", "narrative", "prompt_number"}, []string{"memory_session_id", "content_hash"}},
			{"session_summaries", []string{"sdk_session_id", "request", "files_edited", "prompt_number"}, []string{"memory_session_id"}},
			{"user_prompts", []string{"claude_session_id", "prompt_number", "prompt_text"}, []string{"content_session_id", "session_db_id"}},
		}
		for _, tt := range tests {
			cols := columns(t, db, tt.table)
			for _, c := range tt.has {
				if !slices.Contains(cols, c) {
					t.Errorf("%s lacks %s (has %v)", tt.table, c, cols)
				}
			}
			for _, c := range tt.hasNot {
				if slices.Contains(cols, c) {
					t.Errorf("%s has %s, which came after the rename", tt.table, c)
				}
			}
		}
		var mode string
		if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("journal_mode %q (%v), want wal", mode, err)
		}
	})

	t.Run("rows", func(t *testing.T) {
		var sdk, completedAt sql.NullString
		var status string
		if err := db.QueryRow(`SELECT sdk_session_id, status, completed_at FROM sdk_sessions WHERE claude_session_id = 'legacy-1'`).
			Scan(&sdk, &status, &completedAt); err != nil {
			t.Fatal(err)
		}
		if sdk.String != "sdk-1" || status != "completed" || completedAt.String != "2024-12-24T00:27:40.000Z" {
			t.Errorf("legacy-1: sdk %v, status %q, completed_at %v", sdk, status, completedAt)
		}
		if err := db.QueryRow(`SELECT sdk_session_id, status FROM sdk_sessions WHERE claude_session_id = 'legacy-2'`).
			Scan(&sdk, &status); err != nil || sdk.Valid || status != "active" {
			t.Errorf("legacy-2: sdk %v, status %q (%v); want NULL, active", sdk, status, err)
		}

		tests := []struct {
			query string
			want  string
		}{
			{`SELECT group_concat(prompt_number || ':' || prompt_text || '@' || created_at, ' ') FROM user_prompts WHERE claude_session_id = 'legacy-1'`,
				"1:first@2024-12-24T00:26:40.000Z 2:second@2024-12-24T00:26:41.000Z"},
			{`SELECT id || ' ' || type || ' ' || title || ' ' || narrative || ' ' || facts || ' ' || files_read || ' ' ||
				quote(files_modified) || ' ' || quote(text) || ' ' || prompt_number FROM observations WHERE title = 'Added X'`,
				`500 feature Added X X is new. More. ["f"] [] NULL NULL 1`},
			{`SELECT id || ' ' || type || ' ' || quote(title) || ' ' || quote(narrative) || ' ' || quote(prompt_number) || ' ' || text
				FROM observations WHERE title IS NULL`,
				"501 discovery NULL NULL NULL free-text body from before titles existed"},
			{`SELECT sdk_session_id || ' ' || request || ' ' || completed || ' ' || quote(learned) || ' ' || prompt_number FROM session_summaries`,
				"sdk-1 do X did X NULL 2"},
		}
		for _, tt := range tests {
			var got string
			if err := db.QueryRow(tt.query).Scan(&got); err != nil {
				t.Fatalf("%s: %v", tt.query, err)
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		}
	})

	t.Run("errors", func(t *testing.T) {
		tests := []struct {
			name string
			s    LegacySession
			want string
		}{
			{"duplicate session", LegacySession{Session: LegacySDKSession{ClaudeSessionID: "legacy-1", Project: "old"}}, "UNIQUE"},
			{"observation without sdk session", LegacySession{
				Session:      LegacySDKSession{ClaudeSessionID: "legacy-3", Project: "old"},
				Observations: []LegacyObservation{{Title: "orphan"}},
			}, "FOREIGN KEY"},
			{"type outside the old CHECK", LegacySession{
				Session:      LegacySDKSession{ClaudeSessionID: "legacy-4", SDKSessionID: "sdk-4", Project: "old"},
				Observations: []LegacyObservation{{Type: "security_alert", Title: "new type"}},
			}, "CHECK"},
		}
		for _, tt := range tests {
			err := BuildLegacyDB(path, tt.s)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: error %v, want one mentioning %s", tt.name, err, tt.want)
			}
		}
		// A failed build leaves nothing behind.
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM sdk_sessions`).Scan(&n); err != nil || n != 2 {
			t.Errorf("%d sessions after failed builds (%v), want 2", n, err)
		}
	})
}

func columns(t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cols) == 0 {
		t.Fatalf("no table %s", table)
	}
	return cols
}
