package bottles

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/safefile"
)

// Bottles that no source can make again (an archived one, a live one
// whose transcript is gone) are redacted in place when they were made by
// other redaction rules: see render.Reseal.

// ResealFile reseals the bottle at path (a live bottle of the store, or
// an archived one) in place, atomically and under the lock writers take,
// if it was made by other rules, leaving the search index's purge marker
// before it replaces the file (see purge.go). It returns the bottle's new
// bytes, or nil when it was left as it was (made by rules already, gone,
// or not a bottle).
func (s *Store) ResealFile(path string, rules *redact.Rules) ([]byte, error) {
	return resealFile(s.Dir, path, rules)
}

func resealFile(dir, path string, rules *redact.Rules) ([]byte, error) {
	if st, err := ReadState(path); err != nil || st.Redact == rules.ID() {
		return nil, nil
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return resealLocked(dir, path, rules)
}

// resealLocked is resealFile once the lock is held. The bottle is read
// again: another process may have resealed it (or rendered it again)
// since the caller looked.
func resealLocked(dir, path string, rules *redact.Rules) ([]byte, error) {
	f, err := openBottle(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("reseal %s: %w", path, err)
	}
	out, st, err := render.Reseal(data, rules)
	if errors.Is(err, render.ErrNoState) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if bytes.Equal(out, data) {
		return nil, nil // made by rules already: nothing to write, nothing to purge
	}
	tmp, err := writeTemp(dir, st.Session, out, true)
	if err != nil {
		return nil, fmt.Errorf("reseal %s: %w", path, err)
	}
	// The search index must forget what the bottle held: asked before the
	// rename, as Write asks (see purge.go).
	if err := leavePurge(dir); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("reseal %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("reseal %s: %w", path, err)
	}
	return out, safefile.SyncDir(filepath.Dir(path))
}

// resealed is c, a bottle its sources cannot make again (archived, or
// kept over what they make), resealed in place if it was made by other
// rules (which asks the index to forget what it held). A bottle that
// cannot be resealed is returned as it is.
func resealed(dir string, c *Current, rules *redact.Rules) *Current {
	if c == nil || c.State.Redact == rules.ID() {
		return c
	}
	out, err := resealFile(dir, c.Path, rules)
	if err != nil || out == nil {
		return c
	}
	st, err := render.StateOf(out)
	if err != nil {
		return c
	}
	return &Current{Path: c.Path, Data: out, State: st, Archived: c.Archived}
}

// ResealArchives reseals every archived bottle of the store made by other
// rules (see ResealFile), and returns how many it did. It goes on past a
// bottle it cannot reseal, and returns the first error.
func (s *Store) ResealArchives(rules *redact.Rules) (int, error) {
	dir := s.Dir
	entries, err := os.ReadDir(ArchiveDir(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reseal archived bottles: %w", err)
	}
	n := 0
	var first error
	for _, e := range entries {
		if _, ok := ArchivedSession(e.Name()); !ok || !e.Type().IsRegular() {
			continue
		}
		out, err := resealFile(dir, filepath.Join(ArchiveDir(dir), e.Name()), rules)
		if err != nil && first == nil {
			first = err
		}
		if out != nil {
			n++
		}
	}
	return n, first
}
