package memwriter

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

func TestWriteRealClaudeMem(t *testing.T) {
	w := Require(t)
	t.Logf("claude-mem %s at %s, bun %s", w.Version, w.ClaudeMem, w.Bun)

	const (
		sid      = "0b8e3a52-5c1e-4f0e-9d51-6f2a9c1d7e10"
		mem      = "mem-7f1c"
		project  = "bottled"
		prompt1  = "Fix the retry loop <private>secret</private> please"
		stripped = "Fix the retry loop  please" // inner whitespace is kept
		private  = "<private>only secret</private>"
		batch    = int64(1_790_000_000_000) // observer batch time, ms
	)
	// 5000 UTF-16 units but 4990 code points: the cap counts UTF-16 units.
	long := strings.Repeat("😀", 10) + strings.Repeat("x", 4980)

	ops := []Op{
		{"op": "session", "content": sid, "project": project, "prompt": prompt1},
		{"op": "register", "content": sid, "memory": mem},
		{"op": "prompt", "content": sid, "number": 1, "text": prompt1},
		{"op": "tool_use", "content": sid, "tool_use_id": "toolu_01", "tool_name": "Bash",
			"tool_input": map[string]any{"command": "go test ./..."}, "tool_response": map[string]any{"stdout": "ok"},
			"prompt_number": 1},
		{"op": "tool_use", "content": sid, "tool_use_id": "toolu_02", "tool_name": "Read",
			"tool_input": map[string]any{"file_path": "/src/retry.go"}, "prompt_number": 1},
		{"op": "tool_use", "content": sid, "tool_use_id": "toolu_03", "tool_name": "Grep", "prompt_number": 1},
		{"op": "observation", "content": sid, "prompt_number": 1, "type": "discovery",
			"title": "Explored retry loop", "subtitle": "three call sites", "narrative": "The loop retries forever. It ignores ctx.",
			"facts": []string{"a", "b"}, "concepts": []string{"how-it-works"}, "files_read": []string{"/src/retry.go"},
			"created_at_epoch": batch, "tool_use_ids": []string{"toolu_01", "toolu_02"}},
		{"op": "observation", "content": sid, "prompt_number": 1, "type": "bugfix",
			"title": "Bounded the retries", "narrative": "Capped at five.", "files_modified": []string{"/src/retry.go"},
			"created_at_epoch": batch},
		{"op": "summary", "content": sid, "prompt_number": 1, "request": "Fix the retry loop",
			"investigated": "retry.go", "learned": "unbounded", "completed": "capped", "next_steps": "tests", "notes": "n"},
		{"op": "prompt", "content": sid, "number": 2, "text": long},
		{"op": "observation", "content": sid, "prompt_number": 2, "type": "change", "title": "Added jitter test"},
		{"op": "summary", "content": sid, "prompt_number": 2, "request": "Add a test"},
		{"op": "register", "content": sid, "memory": "mem-later"}, // register-once: ignored
		{"op": "session", "content": "s-private", "project": project, "prompt": private},
		{"op": "prompt", "content": "s-private", "number": 1, "text": "  " + private + "\n"},
		{"op": "checkpoint", "mode": "TRUNCATE"},
	}
	dbPath := filepath.Join(t.TempDir(), "claude-mem.db")
	before := time.Now().UnixMilli()
	res := w.Write(t, dbPath, ops...)
	after := time.Now().UnixMilli()

	if len(res) != len(ops) {
		t.Fatalf("got %d results for %d ops", len(res), len(ops))
	}
	for i, r := range res {
		if r.Op != ops[i]["op"] {
			t.Errorf("result %d is for op %q, want %q", i, r.Op, ops[i]["op"])
		}
		if r.Op != "checkpoint" && r.ID == 0 {
			t.Errorf("result %d (%s) has no row id", i, r.Op)
		}
	}
	sessionID, obs1, obs2, obs3 := res[0].ID, res[6].ID, res[7].ID, res[10].ID
	if res[1].Memory != mem || res[12].Memory != mem {
		t.Errorf("registered memory ids %q, %q; want %q both times", res[1].Memory, res[12].Memory, mem)
	}
	if res[6].Linked != 2 {
		t.Errorf("observation linked %d tool uses, want 2", res[6].Linked)
	}
	if res[6].CreatedAtEpoch != batch {
		t.Errorf("observation created_at_epoch %d, want the override %d", res[6].CreatedAtEpoch, batch)
	}
	if c := res[15]; c.Busy != 0 {
		t.Errorf("checkpoint busy: %+v", c)
	}

	db := OpenRO(t, dbPath)

	t.Run("sdk_sessions", func(t *testing.T) {
		tests := []struct {
			content, memory, userPrompt string
		}{
			{sid, mem, stripped},
			// A first prompt that is private through and through is kept
			// raw: claude-mem falls back to the unstripped text.
			{"s-private", "", private},
		}
		for _, tt := range tests {
			var memory sql.NullString
			var userPrompt, platform, proj, status string
			var started int64
			err := db.QueryRow(`SELECT memory_session_id, user_prompt, platform_source, project, status, started_at_epoch
				FROM sdk_sessions WHERE content_session_id = ?`, tt.content).
				Scan(&memory, &userPrompt, &platform, &proj, &status, &started)
			if err != nil {
				t.Fatalf("%s: %v", tt.content, err)
			}
			if memory.String != tt.memory || userPrompt != tt.userPrompt || platform != "claude" || proj != project || status != "active" {
				t.Errorf("%s: got memory %q, user_prompt %q, platform %q, project %q, status %q; want %q, %q, claude, %q, active",
					tt.content, memory.String, userPrompt, platform, proj, status, tt.memory, tt.userPrompt, project)
			}
			if started < before || started > after {
				t.Errorf("%s: started_at_epoch %d outside the run [%d, %d]", tt.content, started, before, after)
			}
		}
	})

	t.Run("user_prompts", func(t *testing.T) {
		longUnits := utf16.Encode([]rune(long))
		tests := []struct {
			content string
			number  int
			want    string
		}{
			{sid, 1, stripped},
			{sid, 2, string(utf16.Decode(longUnits[:3999])) + "…"},
			// saveUserPrompt stores a fully private prompt raw (trimmed);
			// the worker's session-init route would have skipped it.
			{"s-private", 1, private},
		}
		for _, tt := range tests {
			var text, createdAt string
			var epoch int64
			var sessionDBID sql.NullInt64
			err := db.QueryRow(`SELECT p.prompt_text, p.created_at, p.created_at_epoch, p.session_db_id
				FROM user_prompts p WHERE p.content_session_id = ? AND p.prompt_number = ?`, tt.content, tt.number).
				Scan(&text, &createdAt, &epoch, &sessionDBID)
			if err != nil {
				t.Fatalf("%s #%d: %v", tt.content, tt.number, err)
			}
			if text != tt.want {
				t.Errorf("%s #%d: prompt_text %.60q… (%d bytes), want %.60q… (%d bytes)",
					tt.content, tt.number, text, len(text), tt.want, len(tt.want))
			}
			if !sessionDBID.Valid {
				t.Errorf("%s #%d: session_db_id is NULL", tt.content, tt.number)
			}
			if epoch < before || epoch > after || createdAt != iso(epoch) {
				t.Errorf("%s #%d: created_at %q / %d, want the run's time [%d, %d] in both", tt.content, tt.number, createdAt, epoch, before, after)
			}
		}
		var capped string
		var sqliteLen int
		if err := db.QueryRow(`SELECT prompt_text, length(prompt_text) FROM user_prompts WHERE id = ?`, res[9].ID).Scan(&capped, &sqliteLen); err != nil {
			t.Fatal(err)
		}
		if n := len(utf16.Encode([]rune(capped))); n != 4000 || !strings.HasSuffix(capped, "…") {
			t.Errorf("capped prompt: %d UTF-16 units, suffix %q; want 4000 ending in …", n, capped[len(capped)-3:])
		}
		if runes := utf8.RuneCountInString(capped); sqliteLen != runes || runes != 3990 {
			t.Errorf("capped prompt: SQLite length %d, %d code points; want 3990", sqliteLen, runes)
		}
		var sid1 int64
		if err := db.QueryRow(`SELECT session_db_id FROM user_prompts WHERE id = ?`, res[2].ID).Scan(&sid1); err != nil || sid1 != sessionID {
			t.Errorf("prompt 1 session_db_id %d (%v), want %d", sid1, err, sessionID)
		}
	})

	t.Run("observations", func(t *testing.T) {
		tests := []struct {
			id              int64
			typ, title      string
			narrative       sql.NullString
			facts, filesMod string
			prompt          int
			fixedEpoch      int64 // 0: the run's time
		}{
			{obs1, "discovery", "Explored retry loop", sql.NullString{String: "The loop retries forever. It ignores ctx.", Valid: true}, `["a","b"]`, `[]`, 1, batch},
			{obs2, "bugfix", "Bounded the retries", sql.NullString{String: "Capped at five.", Valid: true}, `[]`, `["/src/retry.go"]`, 1, batch},
			{obs3, "change", "Added jitter test", sql.NullString{}, `[]`, `[]`, 2, 0},
		}
		for _, tt := range tests {
			var memory, proj, typ, title, facts, filesMod, createdAt string
			var narrative sql.NullString
			var prompt int
			var epoch int64
			err := db.QueryRow(`SELECT memory_session_id, project, type, title, narrative, facts, files_modified,
				prompt_number, created_at, created_at_epoch FROM observations WHERE id = ?`, tt.id).
				Scan(&memory, &proj, &typ, &title, &narrative, &facts, &filesMod, &prompt, &createdAt, &epoch)
			if err != nil {
				t.Fatalf("observation %d: %v", tt.id, err)
			}
			if memory != mem || proj != project || typ != tt.typ || title != tt.title || narrative != tt.narrative ||
				facts != tt.facts || filesMod != tt.filesMod || prompt != tt.prompt {
				t.Errorf("observation %d: got %q %q %q %q %v %s %s #%d", tt.id, memory, proj, typ, title, narrative, facts, filesMod, prompt)
			}
			if tt.fixedEpoch != 0 && epoch != tt.fixedEpoch || tt.fixedEpoch == 0 && (epoch < before || epoch > after) {
				t.Errorf("observation %d: created_at_epoch %d, want %d or the run's time", tt.id, epoch, tt.fixedEpoch)
			}
			if createdAt != iso(epoch) {
				t.Errorf("observation %d: created_at %q does not match created_at_epoch %d", tt.id, createdAt, epoch)
			}
		}
	})

	t.Run("tool_uses", func(t *testing.T) {
		tests := []struct {
			toolUseID   string
			observation sql.NullInt64
			memory      sql.NullString
			input       string
		}{
			{"toolu_01", sql.NullInt64{Int64: obs1, Valid: true}, sql.NullString{String: mem, Valid: true}, `{"command":"go test ./..."}`},
			{"toolu_02", sql.NullInt64{Int64: obs1, Valid: true}, sql.NullString{String: mem, Valid: true}, `{"file_path":"/src/retry.go"}`},
			{"toolu_03", sql.NullInt64{}, sql.NullString{}, `{}`},
		}
		for _, tt := range tests {
			var observation, sessionDBID sql.NullInt64
			var memory sql.NullString
			var input string
			err := db.QueryRow(`SELECT observation_id, memory_session_id, session_db_id, tool_input
				FROM tool_uses WHERE content_session_id = ? AND tool_use_id = ?`, sid, tt.toolUseID).
				Scan(&observation, &memory, &sessionDBID, &input)
			if err != nil {
				t.Fatalf("%s: %v", tt.toolUseID, err)
			}
			if observation != tt.observation || memory != tt.memory || sessionDBID.Int64 != sessionID || input != tt.input {
				t.Errorf("%s: got observation %v, memory %v, session_db_id %v, input %s; want %v, %v, %d, %s",
					tt.toolUseID, observation, memory, sessionDBID, input, tt.observation, tt.memory, sessionID, tt.input)
			}
		}
	})

	t.Run("session_summaries", func(t *testing.T) {
		rows, err := db.Query(`SELECT memory_session_id, prompt_number, request, files_read FROM session_summaries ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var memory, request, filesRead string
			var prompt int
			if err := rows.Scan(&memory, &prompt, &request, &filesRead); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s|%d|%s|%s", memory, prompt, request, filesRead))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		want := []string{mem + "|1|Fix the retry loop|[]", mem + "|2|Add a test|[]"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("summaries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	t.Run("schema", func(t *testing.T) {
		var mode string
		if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("journal_mode %q (%v), want wal", mode, err)
		}
		var version int
		if err := db.QueryRow(`SELECT max(version) FROM schema_versions`).Scan(&version); err != nil {
			t.Fatal(err)
		}
		t.Logf("schema ledger v%d", version)
		if version < 51 { // tool_uses arrived in v51
			t.Errorf("schema ledger v%d, want ≥ 51", version)
		}
	})
}

// TestWriteWhileWatched writes to one database in several runs while a
// reader holds a connection open, as the daemon will: every run appends and
// bumps the reader's data_version; a run ended by kill leaves its rows in the
// WAL only, and a checkpoint op moves them into the database file.
func TestWriteWhileWatched(t *testing.T) {
	w := Require(t)
	dbPath := filepath.Join(t.TempDir(), "claude-mem.db")
	first := w.Write(t, dbPath,
		Op{"op": "session", "content": "s1", "project": "p", "prompt": "one"},
		Op{"op": "prompt", "content": "s1", "number": 1, "text": "one"},
	)

	conn, err := OpenRO(t, dbPath).Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var version int64
	// check reads the prompt count through the long-lived connection and
	// through a fresh immutable one, which sees the database file only.
	check := func(step string, want, wantFile int, wantWAL bool) {
		t.Helper()
		var n, v int64
		if err := conn.QueryRowContext(t.Context(), `SELECT count(*) FROM user_prompts`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(t.Context(), `PRAGMA data_version`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if n != int64(want) {
			t.Errorf("%s: reader sees %d prompts, want %d", step, n, want)
		}
		if v == version {
			t.Errorf("%s: data_version unchanged at %d", step, v)
		}
		version = v

		var inFile int
		if err := OpenRO(t, dbPath, "immutable=1").QueryRow(`SELECT count(*) FROM user_prompts`).Scan(&inFile); err != nil {
			t.Fatal(err)
		}
		if inFile != wantFile {
			t.Errorf("%s: database file holds %d prompts, want %d", step, inFile, wantFile)
		}
		fi, err := os.Stat(dbPath + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Size() > 0; got != wantWAL {
			t.Errorf("%s: WAL is %d bytes; want frames: %v", step, fi.Size(), wantWAL)
		}
	}
	check("first run", 1, 1, false)

	second := w.Write(t, dbPath, Op{"op": "prompt", "content": "s1", "number": 2, "text": "two"})
	if second[0].ID <= first[1].ID {
		t.Errorf("second run's prompt id %d, want > %d", second[0].ID, first[1].ID)
	}
	check("closed run", 2, 2, false)

	killed := w.Write(t, dbPath, Op{"op": "prompt", "content": "s1", "number": 3, "text": "three"}, Op{"op": "kill"})
	if len(killed) != 2 || killed[1].Op != "kill" {
		t.Errorf("killed run results %+v", killed)
	}
	check("killed run", 3, 2, true)

	w.Write(t, dbPath, Op{"op": "checkpoint"}, Op{"op": "kill"})
	check("checkpoint", 3, 3, false)
}

// TestWriteErrors checks that bad ops stop the run with a message that says
// which op failed and why, including errors raised by claude-mem itself.
func TestWriteErrors(t *testing.T) {
	w := Require(t)
	session := Op{"op": "session", "content": "s1", "project": "p", "prompt": "hi"}
	tests := []struct {
		name string
		ops  []Op
		done int    // results before the failure
		want string // in the error
	}{
		{"unknown op", []Op{{"op": "sesion"}}, 0, `op #1 ("sesion"): unknown op`},
		{"unknown field", []Op{session, {"op": "prompt", "content": "s1", "number": 1, "txt": "x"}}, 1, `op #2 ("prompt"): unknown field(s) txt`},
		{"no session", []Op{{"op": "register", "content": "nope", "memory": "m"}}, 0, `no sdk_sessions row for content session "nope"`},
		{"not registered", []Op{session, {"op": "summary", "content": "s1", "request": "r"}}, 1, `has no memory_session_id yet`},
		{"empty title", []Op{session, {"op": "register", "content": "s1", "memory": "m"},
			{"op": "observation", "content": "s1", "type": "discovery", "title": " "}}, 2, `storeObservation requires a non-empty title`},
		{"bad type", []Op{session, {"op": "prompt", "content": "s1", "number": "1", "text": "x"}}, 1, `"number" must be an integer`},
		{"kill not last", []Op{{"op": "kill"}, session}, 0, `op #1 ("kill"): must be the last op`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := w.run(filepath.Join(t.TempDir(), "claude-mem.db"), t.TempDir(), t.TempDir(), tt.ops)
			if err == nil {
				t.Fatalf("no error; results %+v", res)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if len(res) != tt.done {
				t.Errorf("%d results before the failure, want %d", len(res), tt.done)
			}
		})
	}
}

// TestLocate checks where Locate looks, with stand-in files in the cache
// layout; it needs no bun.
func TestLocate(t *testing.T) {
	dir, err := testdataDir()
	if err != nil {
		t.Fatal(err)
	}
	versions, err := readVersions(filepath.Join(dir, "versions.env"))
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	bun := filepath.Join(cache, "bun-"+versions["BUN_VERSION"], "node_modules", ".bin", "bun")
	pkg := filepath.Join(cache, "claude-mem-"+versions["CLAUDE_MEM_VERSION"], "package")
	write := func(path, content string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(bun, "#!/bin/sh\n", 0o755)
	write(filepath.Join(pkg, "package.json"), `{"name":"claude-mem","version":"`+versions["CLAUDE_MEM_VERSION"]+`"}`, 0o644)
	write(filepath.Join(pkg, storeScript), "", 0o644)
	notExec := filepath.Join(t.TempDir(), "bun")
	write(notExec, "", 0o644)

	tests := []struct {
		name             string
		env              map[string]string
		wantBun, wantPkg string
		wantErr          []string // all in the error; nil: no error
	}{
		{"cache", map[string]string{EnvCache: cache}, bun, pkg, nil},
		{"xdg cache", map[string]string{"XDG_CACHE_HOME": filepath.Dir(cache), EnvCache: ""}, "", "", []string{filepath.Join(filepath.Dir(cache), "bottled-ci")}},
		{"env beats cache", map[string]string{EnvCache: t.TempDir(), EnvBun: bun, EnvClaudeMem: pkg}, bun, pkg, nil},
		{"empty cache", map[string]string{EnvCache: t.TempDir()}, "", "", []string{"bun: BOTTLED_BUN unset", "claude-mem: BOTTLED_CLAUDE_MEM unset"}},
		{"bad env", map[string]string{EnvCache: cache, EnvBun: notExec, EnvClaudeMem: cache}, "", "",
			[]string{"BOTTLED_BUN=" + notExec, "not an executable file", "BOTTLED_CLAUDE_MEM=" + cache, "not an unpacked claude-mem package"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvBun, "")
			t.Setenv(EnvClaudeMem, "")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			w, err := Locate()
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if w.Bun != tt.wantBun || w.ClaudeMem != tt.wantPkg || w.Version != versions["CLAUDE_MEM_VERSION"] {
					t.Errorf("got %+v, want bun %s, claude-mem %s", w, tt.wantBun, tt.wantPkg)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; got %+v", w)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}
