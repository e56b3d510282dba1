package sources

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// The environment variables by which Claude Code and claude-mem are told
// their directories; bottled's commands read them the same way.
const (
	ClaudeDirEnv = "CLAUDE_CONFIG_DIR"   // Claude Code's config directory
	DataDirEnv   = "CLAUDE_MEM_DATA_DIR" // claude-mem's data directory
)

// Origin is where a directory was found.
type Origin int

// The places a directory is found, the first that has one winning.
const (
	FromDefault  Origin = iota // the home directory's ~/.claude or ~/.claude-mem
	FromFlag                   // --claude-dir or --data-dir
	FromEnv                    // ClaudeDirEnv or DataDirEnv
	FromSettings               // DataDirEnv in claude-mem's settings.json
)

// Dir is a directory bottled works on, absolute, and where it was found.
type Dir struct {
	Path string
	From Origin
	// Where names the flag, the variable or the settings file it came
	// from ("" for the default), for what bottled tells the user.
	Where string
}

// Dirs are Claude Code's directory and claude-mem's data directory as
// FindDirs found them.
type Dirs struct {
	Claude, Data Dir
	// Warning is what the user must hear of once: the data directory is
	// the default because claude-mem's settings.json could not be used.
	Warning string
}

// Given are the directories given on the command line: nil where a flag
// was not given.
type Given struct{ Claude, Data *string }

// FindDirs finds the two directories as Claude Code and claude-mem do, a
// flag given beating both.
//
// claude-mem 13.25.3 finds its data directory in one function
// (resolveDataDir, minified di() in plugin/scripts/worker-service.cjs,
// Un() in dist/npx-cli/index.js; the worker opens claude-mem.db in it):
// CLAUDE_MEM_DATA_DIR when it is not empty, else CLAUDE_MEM_DATA_DIR
// from ~/.claude-mem/settings.json (always that file, whatever the
// variable says), else ~/.claude-mem; either value with a leading ~
// expanded by expandTilde. A settings file it cannot read or parse is
// ignored, silently: bottled says so (Warning).
//
// Claude Code 2.1.332 (its bundled JS: the config dir is
// `(process.env.CLAUDE_CONFIG_DIR ?? join(homedir(), ".claude")).normalize("NFC")`,
// and projects/ is joined to that) takes CLAUDE_CONFIG_DIR as it is: an
// empty one, or one starting with ~, is a directory relative to each
// session's working directory (seen running it: its projects/ went to
// <cwd>/projects and <cwd>/~/cc/projects). bottled cannot follow it there
// and refuses both, saying so (a ConfigError), rather than watch another
// directory.
//
// The flags are bottled's own: a leading ~ in them is expanded too (a
// shell does not expand --data-dir=~/x), and an empty one is an
// EmptyFlagError.
func FindDirs(given Given) (Dirs, error) {
	var d Dirs
	var err error
	if d.Claude, err = findClaudeDir(given.Claude); err != nil {
		return Dirs{}, err
	}
	if d.Data, d.Warning, err = findDataDir(given.Data); err != nil {
		return Dirs{}, err
	}
	return d, nil
}

// EmptyFlagError is a directory flag given empty: bad usage.
type EmptyFlagError struct{ Flag string }

func (e EmptyFlagError) Error() string { return "--" + e.Flag + " must not be empty" }

// ConfigError is a directory the environment or claude-mem's settings
// give wrong; its message says what to do.
type ConfigError struct{ Msg string }

func (e ConfigError) Error() string { return e.Msg }

func findClaudeDir(flag *string) (Dir, error) {
	if flag != nil {
		return flagDir("claude-dir", *flag)
	}
	if v, ok := os.LookupEnv(ClaudeDirEnv); ok {
		switch {
		case v == "":
			return Dir{}, ConfigError{ClaudeDirEnv + " is set but empty: Claude Code then keeps its files in each session's working directory, where bottled cannot follow; unset it, or give it (or --claude-dir) Claude Code's directory"}
		case strings.HasPrefix(v, "~"):
			return Dir{}, ConfigError{fmt.Sprintf("%s %s starts with ~, which Claude Code does not expand (it keeps its files in a directory named ~ in each session's working directory, where bottled cannot follow): give it (or --claude-dir) a full path", ClaudeDirEnv, v)}
		}
		return absDir(v, FromEnv, ClaudeDirEnv)
	}
	home, err := HomeDir()
	if err != nil {
		return Dir{}, err
	}
	return Dir{Path: filepath.Join(home, ".claude"), From: FromDefault}, nil
}

func findDataDir(flag *string) (Dir, string, error) {
	if flag != nil {
		d, err := flagDir("data-dir", *flag)
		return d, "", err
	}
	if v := os.Getenv(DataDirEnv); v != "" {
		d, err := expandedDir(v, FromEnv, DataDirEnv)
		return d, "", err
	}
	home, err := HomeDir()
	if err != nil {
		return Dir{}, "", err
	}
	def := Dir{Path: filepath.Join(home, ".claude-mem"), From: FromDefault}
	settings := filepath.Join(def.Path, "settings.json")
	v, problem, asClaudeMem := settingsDataDir(settings)
	switch {
	case problem != "" && asClaudeMem:
		return def, fmt.Sprintf("claude-mem's settings %s cannot be read (%s): using %s, as claude-mem does", settings, problem, def.Path), nil
	case problem != "":
		return def, fmt.Sprintf("claude-mem's settings %s cannot be used (%s): using %s", settings, problem, def.Path), nil
	case v == "":
		return def, "", nil
	}
	d, err := expandedDir(v, FromSettings, settings)
	return d, "", err
}

// settingsDataDir is CLAUDE_MEM_DATA_DIR in claude-mem's settings file,
// read as resolveDataDir reads it: a BOM dropped, then JSON; the value
// under "env" if the file has one that is not null (the legacy nested
// form), else the file's top level; "" where there is none, or where it
// is empty. A file that cannot be read is a problem claude-mem ignores
// too (asClaudeMem); a value that is not a string is one it would fail
// on.
func settingsDataDir(path string) (v, problem string, asClaudeMem bool) {
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", "", false
	case err != nil:
		return "", unwrapPath(err).Error(), true
	}
	var top any
	if err := json.Unmarshal(bytes.TrimPrefix(b, []byte("\uFEFF")), &top); err != nil {
		return "", err.Error(), true
	}
	if top == nil {
		return "", "it is null, not an object", true
	}
	obj, ok := top.(map[string]any)
	if env, has := obj["env"]; has && env != nil {
		obj, ok = env.(map[string]any)
	}
	if !ok {
		return "", "", false // no CLAUDE_MEM_DATA_DIR in it, for claude-mem either
	}
	switch val := obj[DataDirEnv].(type) {
	case nil:
		return "", "", false
	case string:
		return val, "", false
	case bool:
		if !val {
			return "", "", false
		}
	case float64:
		if val == 0 {
			return "", "", false
		}
	}
	return "", fmt.Sprintf("%s is %s, not a string", DataDirEnv, valueKind(obj[DataDirEnv])), false
}

// valueKind names the kind of a decoded JSON value.
func valueKind(v any) string {
	switch v.(type) {
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case []any:
		return "an array"
	}
	return "an object"
}

// unwrapPath drops the path a *fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func flagDir(name, v string) (Dir, error) {
	if v == "" {
		return Dir{}, EmptyFlagError{name}
	}
	return expandedDir(v, FromFlag, "--"+name)
}

// expandedDir is absDir after expandTilde.
func expandedDir(v string, from Origin, where string) (Dir, error) {
	v, err := expandTilde(v)
	if err != nil {
		return Dir{}, fmt.Errorf("%s %s: %w", where, v, err)
	}
	return absDir(v, from, where)
}

func absDir(v string, from Origin, where string) (Dir, error) {
	p, err := filepath.Abs(v)
	if err != nil {
		return Dir{}, fmt.Errorf("%s %s: %w", where, v, err)
	}
	return Dir{Path: p, From: from, Where: where}, nil
}

// expandTilde expands "~" and a leading "~/" to the home directory, as
// claude-mem's expandHomePath (minified zo() in worker-service.cjs, Qc()
// in dist/npx-cli/index.js) does; "~user" is left as it is.
func expandTilde(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := HomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, p[1:]), nil
}

// HomeDir is the home directory as Node's os.homedir() finds it, which
// both Claude Code and claude-mem ask: $HOME when it is not empty, else
// the user database's.
func HomeDir() (string, error) {
	if h := os.Getenv("HOME"); h != "" {
		return h, nil
	}
	u, err := user.Current()
	if err != nil || u.HomeDir == "" {
		return "", fmt.Errorf("the home directory is not known ($HOME is empty): set HOME, or give --claude-dir and --data-dir")
	}
	return u.HomeDir, nil
}
