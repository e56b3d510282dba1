// Package memwriter writes claude-mem databases for tests. It is test support
// only: nothing outside _test.go files may import it.
//
// Modern databases are written by claude-mem itself: [Writer.Write] runs
// testdata/claudemem/write.js under bun, which drives the SessionStore class
// from the published claude-mem package (the code its worker writes with), so
// a reader is tested against the schema, migrations, tag stripping, prompt cap
// and timestamps of the real writer rather than an imitation. Databases from
// before the v8.2.6 column rename, which no current claude-mem can produce,
// are built in Go by [BuildLegacyDB].
//
// # Ops
//
// An [Op] is one JSON object naming a SessionStore call by "op". The content
// session id ("content") selects the sdk_sessions row (platform 'claude');
// observations and summaries are stored under that row's memory session id
// and project. Optional fields may be left out.
//
//	session      content, project, prompt            createSDKSession (upsert; stores the first prompt)
//	register     content, memory                     ensureMemorySessionIdRegistered (first id wins)
//	prompt       content, number, text               saveUserPrompt (strip tags, cap at 4000 UTF-16 units)
//	observation  content, type, title; prompt_number, subtitle, narrative, facts, concepts,
//	             files_read, files_modified, created_at_epoch, generated_by_model,
//	             tool_use_ids                        storeObservation, then linkToolUsesToObservation
//	tool_use     content, tool_use_id, tool_name; tool_input, tool_response, prompt_number,
//	             created_at_epoch, cwd, agent_type, agent_id
//	                                                 upsertToolUse (payloads JSON-encoded)
//	summary      content; prompt_number, request, investigated, learned, completed,
//	             next_steps, notes, files_read, files_edited, created_at_epoch
//	                                                 storeSummary
//	checkpoint   mode (default TRUNCATE)             PRAGMA wal_checkpoint(mode)
//	kill         (must be last)                      SIGKILL bun instead of closing the store
//
// Epochs are milliseconds. created_at of sessions and prompts is always the
// time of the run: SessionStore offers no override. Unknown ops and fields
// are refused.
//
// Two things differ from the live worker on purpose. "prompt" calls
// saveUserPrompt directly, while the worker's session-init route first skips
// prompts that are empty after tag stripping (and duplicates within 10 s), so
// a fully private prompt given to "prompt" is stored raw, as saveUserPrompt
// does: leave the op out to model the route. And tool payloads are not
// tag-stripped, which the route does before upsertToolUse.
//
// Each run opens one SessionStore and closes it at the end; a run against an
// existing database appends. Closing the store checkpoints the WAL into the
// database file (even while other connections are open, as long as none is
// inside a read transaction), which a live worker, holding its connection
// for hours, does not do. End a run with "kill" to leave its commits in the
// WAL, as a running or killed worker would: that is the state in which a
// reader that ignores the WAL (immutable=1) loses rows.
//
// # Finding bun and claude-mem
//
// [Locate] takes bun from $BOTTLED_BUN and the unpacked claude-mem package
// (the "package" directory of `npm pack claude-mem`) from $BOTTLED_CLAUDE_MEM.
// Each one not set is looked up in the cache that .ci/run fills, with the
// versions pinned in testdata/claudemem/versions.env:
//
//	${BOTTLED_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bottled-ci}/
//	    bun-<BUN_VERSION>/node_modules/.bin/bun
//	    claude-mem-<CLAUDE_MEM_VERSION>/package/plugin/sqlite/SessionStore.js
//
// This is the one description of that layout; .ci/run follows it.
package memwriter

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	_ "github.com/ncruces/go-sqlite3/driver" // registers "sqlite3"

	"github.com/bottled-dev/bottled/internal/skips"
)

// Environment variables read by [Locate] and [Require].
const (
	EnvBun       = "BOTTLED_BUN"                // path to the bun binary
	EnvClaudeMem = "BOTTLED_CLAUDE_MEM"         // path to the unpacked claude-mem "package" dir
	EnvCache     = "BOTTLED_CI_CACHE"           // cache dir that .ci/run installs into
	EnvRequire   = "BOTTLED_REQUIRE_CLAUDE_MEM" // "1": Require fails instead of skipping
)

// storeScript is where SessionStore lives inside the claude-mem package.
var storeScript = filepath.Join("plugin", "sqlite", "SessionStore.js")

// runTimeout bounds one bun run; a run takes well under a second.
const runTimeout = 2 * time.Minute

// Op is one operation of write.js, e.g.
//
//	memwriter.Op{"op": "prompt", "content": "s1", "number": 1, "text": "hello"}
//
// The package doc lists the ops and their fields.
type Op map[string]any

// Result is what write.js reports for one Op, in Op order.
type Result struct {
	Op string `json:"op"`
	// ID is the row id the op wrote: sdk_sessions.id for session and
	// register, else the user_prompts, observations, tool_uses or
	// session_summaries id. It is 0 for a tool_use claude-mem chose not to
	// store (its own memory tools) and for checkpoint and kill.
	ID int64 `json:"id"`
	// Memory is the memory session id registered after a register op: the
	// first one ever offered for the session.
	Memory string `json:"memory,omitempty"`
	// CreatedAtEpoch is the created_at_epoch (ms) stored by an observation
	// or summary.
	CreatedAtEpoch int64 `json:"created_at_epoch,omitempty"`
	// Linked is the number of tool_uses rows an observation's tool_use_ids
	// matched.
	Linked int `json:"linked,omitempty"`
	// Busy, Log and Checkpointed are the columns of PRAGMA wal_checkpoint.
	Busy         int `json:"busy,omitempty"`
	Log          int `json:"log,omitempty"`
	Checkpointed int `json:"checkpointed,omitempty"`
}

// Writer runs claude-mem's SessionStore under bun. Get one from [Locate] or
// [Require].
type Writer struct {
	Bun       string // bun binary
	ClaudeMem string // unpacked claude-mem package dir
	Version   string // claude-mem version, from its package.json
	script    string // write.js
}

// OpenRO opens a database read-only with database/sql, for tests that read
// what they compare bottled with independently of bottled's reader; params
// are more URI parameters (such as "immutable=1").
func OpenRO(tb testing.TB, path string, params ...string) *sql.DB {
	tb.Helper()
	uri := "file:" + filepath.ToSlash(path) + "?" + strings.Join(append([]string{"mode=ro", "_pragma=busy_timeout(5000)"}, params...), "&")
	db, err := sql.Open("sqlite3", uri)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// Hold opens one connection to the database at path, as another process
// holding it does, runs stmts on it (a lock, a write transaction, a read
// snapshot) and keeps it open until the test ends or the caller closes
// it; params are more URI parameters (such as "mode=ro").
func Hold(tb testing.TB, path string, stmts []string, params ...string) *sql.Conn {
	tb.Helper()
	uri := "file:" + filepath.ToSlash(path)
	if len(params) > 0 {
		uri += "?" + strings.Join(params, "&")
	}
	db, err := sql.Open("sqlite3", uri)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	for _, q := range stmts {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
	return conn
}

// Locate finds bun, claude-mem and write.js as the package doc describes. The
// error names everything that is missing and where it was looked for.
func Locate() (Writer, error) {
	dir, err := testdataDir()
	if err != nil {
		return Writer{}, fmt.Errorf("locate claude-mem writer: %w", err)
	}
	versions, err := readVersions(filepath.Join(dir, "versions.env"))
	if err != nil {
		return Writer{}, fmt.Errorf("locate claude-mem writer: %w", err)
	}
	cache := cacheDir()
	w := Writer{script: filepath.Join(dir, "write.js")}

	var missing []string
	w.Bun, err = find(EnvBun, filepath.Join(cache, "bun-"+versions["BUN_VERSION"], "node_modules", ".bin", "bun"), checkExecutable)
	if err != nil {
		missing = append(missing, "bun: "+err.Error())
	}
	w.ClaudeMem, err = find(EnvClaudeMem, filepath.Join(cache, "claude-mem-"+versions["CLAUDE_MEM_VERSION"], "package"), checkClaudeMem)
	if err != nil {
		missing = append(missing, "claude-mem: "+err.Error())
	} else if w.Version, err = packageVersion(w.ClaudeMem); err != nil {
		missing = append(missing, "claude-mem: "+err.Error())
	}
	if len(missing) > 0 {
		return Writer{}, fmt.Errorf("claude-mem writer unavailable (run .ci/run to install into %s, or set %s and %s): %s",
			cache, EnvBun, EnvClaudeMem, strings.Join(missing, "; "))
	}
	return w, nil
}

// Require returns the writer, or skips the test when there is none; with
// BOTTLED_REQUIRE_CLAUDE_MEM=1 (as CI sets) it fails it instead, so that CI
// can never pass by skipping.
func Require(tb testing.TB) Writer {
	tb.Helper()
	w, err := Locate()
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			tb.Fatalf("%v (%s=1: not skipping)", err, EnvRequire)
		}
		skips.Note(tb, "bun and claude-mem", "run .ci/run, which installs them into "+cacheDir()+", or set "+EnvBun+" and "+EnvClaudeMem)
		tb.Skip(err)
	}
	return w
}

// Write runs ops against the database at dbPath (created if missing, else
// appended to) and returns their results. Any error fails the test with
// write.js's message. HOME and CLAUDE_MEM_DATA_DIR point into temporary
// directories so that nothing is written outside them and dbPath.
func (w Writer) Write(tb testing.TB, dbPath string, ops ...Op) []Result {
	tb.Helper()
	res, err := w.run(dbPath, tb.TempDir(), tb.TempDir(), ops)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// run is Write without the test: home is bun's home directory, data
// claude-mem's data directory (for its logs).
func (w Writer) run(dbPath, home, data string, ops []Op) ([]Result, error) {
	if ops == nil {
		ops = []Op{}
	}
	in, err := json.Marshal(map[string][]Op{"ops": ops})
	if err != nil {
		return nil, fmt.Errorf("encode claude-mem writer ops: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.Bun, w.script, filepath.Join(w.ClaudeMem, storeScript), dbPath, "-")
	// Later entries win: everything bun or claude-mem might write under the
	// home or cache directories goes to the temporary ones.
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"CLAUDE_MEM_DATA_DIR="+data,
		"CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
	)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var exit *exec.ExitError
	if len(ops) > 0 && ops[len(ops)-1]["op"] == "kill" && errors.As(runErr, &exit) && exit.ExitCode() == -1 {
		runErr = nil // killed by its own signal, as asked; the results tell whether all ops ran
	}

	var res []Result
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return res, fmt.Errorf("run claude-mem writer: bad result line %q: %w", sc.Text(), err)
		}
		res = append(res, r)
	}
	if runErr != nil {
		return res, fmt.Errorf("run claude-mem writer (%d of %d ops done): %w: %s",
			len(res), len(ops), runErr, strings.TrimSpace(stderr.String()))
	}
	if len(res) != len(ops) {
		return res, fmt.Errorf("run claude-mem writer: %d results for %d ops; stderr: %s",
			len(res), len(ops), strings.TrimSpace(stderr.String()))
	}
	return res, nil
}

// testdataDir finds testdata/claudemem: beside this source file when the
// binary was built from it in place (any package's test), else under the
// module root above the working directory.
func testdataDir() (string, error) {
	const rel = "testdata/claudemem"
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Join(filepath.Dir(file), "..", "..", rel)
		if _, err := os.Stat(filepath.Join(dir, "write.js")); err == nil {
			return dir, nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find %s: %w", rel, err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && isBottled(b) {
			return filepath.Join(d, rel), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("find %s: no bottled go.mod above %s", rel, wd)
		}
	}
}

func isBottled(gomod []byte) bool {
	for line := range strings.Lines(string(gomod)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return f[1] == "bottled"
		}
	}
	return false
}

// readVersions parses versions.env: KEY=VALUE lines and # comments.
func readVersions(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read pinned versions: %w", err)
	}
	v := map[string]string{}
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("read pinned versions: %s: bad line %q", path, line)
		}
		v[key] = val
	}
	for _, key := range []string{"BUN_VERSION", "CLAUDE_MEM_VERSION"} {
		if v[key] == "" {
			return nil, fmt.Errorf("read pinned versions: %s: no %s", path, key)
		}
	}
	return v, nil
}

// cacheDir is .ci/run's cache directory. It deliberately does not use
// os.UserCacheDir, whose macOS answer differs from the shell's.
func cacheDir() string {
	if d := os.Getenv(EnvCache); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "bottled-ci")
}

// find returns the path named by env if set, else def, once check accepts it.
func find(env, def string, check func(string) error) (string, error) {
	if p := os.Getenv(env); p != "" {
		if err := check(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", env, p, err)
		}
		return p, nil
	}
	if err := check(def); err != nil {
		return "", fmt.Errorf("%s unset and not in the cache: %w", env, err)
	}
	return def, nil
}

func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

func checkClaudeMem(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, storeScript)); err != nil {
		return fmt.Errorf("not an unpacked claude-mem package: %w", err)
	}
	return nil
}

func packageVersion(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", fmt.Errorf("read claude-mem version: %w", err)
	}
	var pkg struct{ Name, Version string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		return "", fmt.Errorf("read claude-mem version: %s: %w", dir, err)
	}
	if pkg.Name != "claude-mem" || pkg.Version == "" {
		return "", errors.New("read claude-mem version: " + dir + "/package.json is not claude-mem's")
	}
	return pkg.Version, nil
}
