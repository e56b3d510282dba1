package inject

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/bottled-dev/bottled/safefile"
)

// How bottled edits settings.json, which Claude Code writes too, in place
// (truncate, then write, as Node's fs.writeFileSync does) or by renaming
// a new file over it, and never under a lock bottled could take:
//
//   - A read that finds the file empty or cut short is a write caught
//     half-way: it is read again, settingsReadTries times settingsSettle
//     apart. A file that stays empty is refused; one that stays malformed
//     is refused with the parser's reason.
//   - Just before the rename, the file is read again and compared with
//     what the edit started from (identity, size, modification time,
//     content); a file that changed is edited again from what is there
//     now, up to settingsEditTries times.
//   - Where the system can (Linux, macOS), the new file is exchanged with
//     the old one rather than renamed over it, and the old one is deleted
//     only once it is clear that no write landed in it after that last
//     check (a rename, or an in-place write by a writer that opened it
//     just before): otherwise it is put back and edited again.
//   - The backup holds the very content the edit started from, so it is
//     never emptier than the file it backs up; it is written once the new
//     file is in place (before, where there is no exchange).
//   - Every copy bottled writes (the file, its backup, the temporary file)
//     is created 0600 (settings hold secrets, env API keys among them) and
//     renamed into place: a link or a stale mode at the backup's name is
//     replaced, never followed. The one link followed is settings.json's
//     own, to the file it points to, which bottled edits in its place.
const (
	// settingsSettle is how long a writer caught half-way gets to finish.
	// A write of a few KB takes microseconds; the wait covers a writer
	// descheduled between its truncation and its write on a loaded
	// machine (time slices of ms, tens of ms with a dozen runnable threads
	// per core). An empty or malformed file is read settingsReadTries
	// times that far apart; a write pays it once.
	settingsSettle    = 20 * time.Millisecond
	settingsReadTries = 10
	// settingsPoll is how often a file that has just left settings.json's
	// place is looked at while it settles: a late write into it goes back
	// within a millisecond.
	settingsPoll = time.Millisecond
	// A try costs an fsync or two (3 ms median, 40 ms at worst, measured
	// on the 2-core test machine under load). Claude Code saves its
	// settings when the user changes one, so more than a couple of tries
	// means a runaway writer.
	settingsEditTries = 50
	// maxSettingsSize bounds what bottled reads: settings files are a few
	// KB; anything near this is not one.
	maxSettingsSize = 16 << 20
)

// Edited says what EditSettings did.
type Edited struct {
	// Changed: the edit changed the settings (or, in a dry run, would).
	Changed bool
	// File is the file that holds the settings: the path given, or the
	// file its symbolic link points to, which bottled edits in its place.
	File string
}

// EditSettings applies edit to the settings file at path and, if that
// changes it and dryRun is false, replaces the file with the result,
// keeping a copy of the previous content at path+".bottled.bak". A
// missing file is edited as an empty one; an empty file (or one that stays
// cut short) is refused, as is anything but a regular file. A symbolic
// link at path is kept: the file it points to is edited.
func EditSettings(ctx context.Context, path string, dryRun bool, edit func([]byte) ([]byte, bool, error)) (Edited, error) {
	file, err := settingsTarget(path)
	res := Edited{File: file}
	if err != nil {
		return res, err
	}
	for range settingsEditTries {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		snap, err := readSettled(ctx, file)
		if err != nil {
			return res, err
		}
		updated, changed, err := edit(snap.data)
		if err != nil {
			return res, fmt.Errorf("%s: %w (bottled left it unchanged)", file, err)
		}
		res.Changed = changed
		if !changed || dryRun {
			return res, nil
		}
		done, err := replaceIfUnchanged(file, path+".bottled.bak", snap, updated)
		if err != nil {
			return res, fmt.Errorf("write %s: %w", file, err)
		}
		if done {
			return res, nil
		}
	}
	return res, fmt.Errorf("%s kept changing while bottled edited it (%d tries): another program keeps writing it; "+
		"run bottled again once it is done (bottled left the file as that program wrote it)", file, settingsEditTries)
}

// settingsTarget is the file that holds the settings at path: path itself,
// or, for a symbolic link, the file it points to.
func settingsTarget(path string) (string, error) {
	info, err := os.Lstat(path)
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		return path, nil // a missing file is created; other errors come with the read
	}
	target, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		link, _ := os.Readlink(path)
		return path, fmt.Errorf("%s is a symbolic link to %s, which does not exist: create it (with {} in it) or remove the link, and run bottled again", path, link)
	}
	if err != nil {
		return path, fmt.Errorf("follow %s: %w", path, err)
	}
	return target, nil
}

// snapshot is one read of a settings file.
type snapshot struct {
	exists bool
	data   []byte
	info   fs.FileInfo // of the file read, when it exists
}

// same reports whether two reads found the same file with the same
// content.
func (s snapshot) same(o snapshot) bool {
	if !s.exists || !o.exists {
		return s.exists == o.exists
	}
	return os.SameFile(s.info, o.info) && s.info.Size() == o.info.Size() &&
		s.info.ModTime().Equal(o.info.ModTime()) && bytes.Equal(s.data, o.data)
}

// readSettled reads the settings file, reading it again while it looks
// like a write caught half-way (empty, or not yet valid JSON).
func readSettled(ctx context.Context, path string) (snapshot, error) {
	for try := 1; ; try++ {
		snap, err := readSettings(path)
		if err != nil || !snap.exists || json.Valid(snap.data) {
			return snap, err
		}
		if try == settingsReadTries {
			if len(bytes.TrimSpace(snap.data)) == 0 {
				return snap, fmt.Errorf("%s is empty, as a file caught half-way through a write is: if it is meant to hold "+
					"no settings, write {} into it (or remove it) and run bottled again (bottled left it unchanged)", path)
			}
			return snap, nil // malformed for good: the edit says why
		}
		t := time.NewTimer(settingsSettle)
		select {
		case <-ctx.Done():
			t.Stop()
			return snap, ctx.Err()
		case <-t.C:
		}
	}
}

// readSettings reads a settings file that is a regular file, without
// blocking on anything else (a FIFO would block an open for reading) and
// without following a link at path (settingsTarget resolved it).
func readSettings(path string) (snapshot, error) {
	f, info, err := safefile.Open(path)
	var irregular *safefile.NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return snapshot{}, nil
	case errors.As(err, &irregular) && irregular.Link():
		return snapshot{}, fmt.Errorf("%s became a symbolic link while bottled read it: run bottled again", path)
	case errors.As(err, &irregular):
		return snapshot{}, fmt.Errorf("%s is not a regular file (%v): bottled only edits a regular file there (bottled left it unchanged)", path, irregular.Mode.Type())
	case err != nil:
		return snapshot{}, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSettingsSize+1))
	if err == nil && len(data) > maxSettingsSize {
		err = fmt.Errorf("over %d MiB, too large for a settings file", maxSettingsSize>>20)
	}
	if err != nil {
		return snapshot{}, fmt.Errorf("read %s: %w", path, err)
	}
	return snapshot{exists: true, data: data, info: info}, nil
}

// replaceIfUnchanged puts data in place of the file at path if it is
// still the file snap read, backing snap up at bak, and reports whether it
// did.
func replaceIfUnchanged(path, bak string, snap snapshot, data []byte) (bool, error) {
	replaced, err := replace(path, bak, snap, data)
	if replaced && err == nil {
		err = safefile.SyncDir(filepath.Dir(path)) // the new name, durable
	}
	return replaced, err
}

// replace is replaceIfUnchanged but for the directory's sync.
func replace(path, bak string, snap snapshot, data []byte) (bool, error) {
	if !snap.exists {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return false, err
		}
	}
	tmp, mine, err := writeTemp(filepath.Dir(path), data)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	if !snap.exists {
		// A link fails if the file appeared meanwhile: nothing is replaced.
		err := os.Link(tmp, path)
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return err == nil, err
	}
	if now, err := readSettings(path); err != nil || !now.same(snap) {
		return false, err
	}
	exchanged, err := safefile.Exchange(tmp, path)
	if err != nil {
		return false, err
	}
	if !exchanged { // the check above is the last word
		if err := backUp(bak, snap); err != nil {
			return false, err
		}
		err := os.Rename(tmp, path)
		return err == nil, err
	}
	// tmp now holds the file that was at path: one written after the
	// check goes back at once.
	if now, err := readSettings(tmp); err != nil || !now.same(snap) {
		return false, putBack(tmp, path, mine)
	}
	if err := backUp(bak, snap); err != nil {
		return false, errors.Join(err, putBack(tmp, path, mine))
	}
	if settled(tmp, snap) {
		return true, nil
	}
	return false, putBack(tmp, path, mine)
}

// settled reports whether the file at path stays the one snap read for
// settingsSettle. A file that was at path a moment ago may still be
// written: a writer that opened it just before it was moved can truncate
// and write it after (seen in TestEditSettingsConcurrentWriter, within a
// millisecond). It is looked at every settingsPoll, so that such a write
// goes back to path without delay.
func settled(path string, snap snapshot) bool {
	for waited := time.Duration(0); ; waited += settingsPoll {
		if now, err := readSettings(path); err != nil || !now.same(snap) {
			return false
		}
		if waited >= settingsSettle {
			return true
		}
		time.Sleep(settingsPoll)
	}
}

// putBack undoes an exchange that displaced a file written after the last
// check: the displaced file goes back to path. If what then comes back is
// not bottled's file as bottled wrote it, another write replaced it or
// rewrote it in place meanwhile, and that newer file goes back instead,
// over the older one.
func putBack(tmp, path string, mine snapshot) error {
	if _, err := safefile.Exchange(tmp, path); err != nil {
		return err
	}
	if settled(tmp, mine) {
		return nil
	}
	return os.Rename(tmp, path)
}

// backUp writes what snap read to bak, unless that is empty: a backup is
// never emptier than the file it backs up.
func backUp(bak string, snap snapshot) error {
	if len(bytes.TrimSpace(snap.data)) == 0 {
		return nil
	}
	if err := safefile.Write(bak, snap.data); err != nil {
		return fmt.Errorf("back up to %s: %w", bak, err)
	}
	return nil
}

// writeTemp writes data, synced, to a new 0600 file in dir and returns its
// name and what a read of it finds.
func writeTemp(dir string, data []byte) (string, snapshot, error) {
	name, info, err := safefile.WriteTemp(dir, ".settings-*.json", data, true)
	if err != nil {
		return "", snapshot{}, err
	}
	return name, snapshot{exists: true, data: data, info: info}, nil
}
