package bottles

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"

	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/safefile"
)

// RulesFile is where a user's own redaction patterns live in a data
// directory: one "Kind: RE2 pattern" a line (see redact.Parse).
func RulesFile(dataDir string) string { return filepath.Join(dataDir, "redact-patterns") }

// maxRulesFile bounds the patterns file read: it is read by every hook.
const maxRulesFile = 1 << 20

// LoadRules returns the redaction rules of a data directory: the built-in
// ones, and the user's patterns from RulesFile if there is one. It never
// returns nil rules: when the file cannot be read, or some of its lines
// cannot be used, the error says so (naming each bad line and what to do)
// and the rules returned are the built-in ones with the lines that can be
// used, for a caller that must go on (the daemon, the hook) rather than
// render nothing; redaction is never off.
func LoadRules(dataDir string) (*redact.Rules, error) {
	path := RulesFile(dataDir)
	f, _, err := safefile.OpenFollow(path)
	if errors.Is(err, fs.ErrNotExist) {
		return redact.Builtin(), nil
	}
	if err != nil {
		return redact.Builtin(), fmt.Errorf("redaction patterns: %w (bottled redacts with its built-in rules alone until it can read them)", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRulesFile+1))
	if err != nil {
		return redact.Builtin(), fmt.Errorf("redaction patterns: read %s: %w (bottled redacts with its built-in rules alone until it can read them)", path, err)
	}
	if len(data) > maxRulesFile {
		return redact.Builtin(), fmt.Errorf("redaction patterns: %s is larger than %d bytes: keep it to patterns, one a line (bottled redacts with its built-in rules alone until then)", path, maxRulesFile)
	}
	user, perr := redact.Parse(data)
	rules, err := redact.Builtin().With(user)
	if err != nil { // Parse checked each pattern; With checks them together
		return redact.Builtin(), fmt.Errorf("redaction patterns in %s: %w (bottled redacts with its built-in rules alone until it is fixed)", path, err)
	}
	if perr != nil {
		return rules, fmt.Errorf("redaction patterns in %s: %w: fix or remove each line named (bottled redacts with its built-in rules and the file's other patterns until then)", path, perr)
	}
	return rules, nil
}

// LoadRulesOrWarn is LoadRules for a caller that renders whatever the
// patterns file holds (the hook, the MCP server, the web view), reading it
// at every render since the user may change it meanwhile: what cannot be
// used is said in log as a warning, and the rules returned redact with all
// that can. It never fails, and never returns nil rules.
func LoadRulesOrWarn(dataDir string, log *slog.Logger) *redact.Rules {
	rules, err := LoadRules(dataDir)
	if err != nil {
		log.Warn("some redaction patterns cannot be used", "err", err)
	}
	return rules
}
