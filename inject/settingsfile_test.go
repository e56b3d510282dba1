package inject

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// userSettings is a settings.json a user has before installing bottled,
// with a secret in it.
const userSettings = `{
  "model": "opus",
  "env": {
    "ANTHROPIC_API_KEY": "sk-secret"
  }
}
`

var testReg = Registration{Command: []string{"/usr/local/bin/bottled"}}

func register(b []byte) ([]byte, bool, error)   { return RegisterHooks(b, testReg) }
func unregister(b []byte) ([]byte, bool, error) { return UnregisterHooks(b) }

func writeSettingsFile(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func readSettingsFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// settingsOf decodes a settings file for the test to look into.
func settingsOf(t *testing.T, data string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, data)
	}
	return m
}

// TestEditSettingsChangedBeforeRename: a program that writes the file
// after bottled read it and before bottled replaced it keeps its write;
// bottled starts again from what that program wrote.
func TestEditSettingsChangedBeforeRename(t *testing.T) {
	path, calls, err := registerWhileWritten(t, func(path string, call int) {
		if call == 1 { // Claude Code saves a setting meanwhile
			writeSettingsFile(t, path+".new", `{"model":"opus","env":{"ANTHROPIC_API_KEY":"sk-secret"},"theme":"dark"}`, 0o600)
			if err := os.Rename(path+".new", path); err != nil {
				t.Fatal(err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	got := settingsOf(t, readSettingsFile(t, path))
	if got["theme"] != "dark" || got["hooks"] == nil || got["model"] != "opus" {
		t.Errorf("after %d edits: %v; want the other program's theme and bottled's hooks", calls, got)
	}
}

// TestEditSettingsKeepsChanging: a file that changes at every try is left
// as the other program wrote it, with an error that says so.
func TestEditSettingsKeepsChanging(t *testing.T) {
	path, calls, err := registerWhileWritten(t, func(path string, call int) {
		writeSettingsFile(t, path, fmt.Sprintf(`{"model":"opus","n":%d}`, call), 0o600)
	})
	if err == nil || !strings.Contains(err.Error(), "kept changing") {
		t.Fatalf("after %d tries: err %v, want one that says the file kept changing", calls, err)
	}
	if got := readSettingsFile(t, path); got != fmt.Sprintf(`{"model":"opus","n":%d}`, calls) {
		t.Errorf("the other program's last write was replaced by %q", got)
	}
}

// registerWhileWritten registers the hooks in a settings.json of
// userSettings that another program writes meanwhile: other runs at each
// try of the edit (the first is 1), after bottled has read the file. It
// returns the file's path, how many tries there were and the edit's
// error.
func registerWhileWritten(t *testing.T, other func(path string, call int)) (path string, calls int, err error) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "settings.json")
	writeSettingsFile(t, path, userSettings, 0o600)
	_, err = EditSettings(context.Background(), path, false, func(b []byte) ([]byte, bool, error) {
		calls++
		other(path, calls)
		return register(b)
	})
	return path, calls, err
}

// TestEditSettingsTornRead: a file caught between a truncation and the
// write that follows (Node's fs.writeFileSync, with which Claude Code
// writes it) is read again once the write is done, not taken for empty
// settings.
func TestEditSettingsTornRead(t *testing.T) {
	for _, torn := range []string{"", userSettings[:20]} {
		t.Run(fmt.Sprintf("%d bytes", len(torn)), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "settings.json")
				writeSettingsFile(t, path, torn, 0o600)
				var wg sync.WaitGroup
				wg.Go(func() { // the writer: done 5 ms after its truncation
					time.Sleep(5 * time.Millisecond)
					writeSettingsFile(t, path, userSettings, 0o600)
				})
				_, err := EditSettings(context.Background(), path, false, register)
				wg.Wait()
				if err != nil {
					t.Fatal(err)
				}
				got := settingsOf(t, readSettingsFile(t, path))
				if got["model"] != "opus" || got["env"] == nil || got["hooks"] == nil {
					t.Errorf("the user's settings were lost: %v", got)
				}
				if bak := readSettingsFile(t, path+".bottled.bak"); bak != userSettings {
					t.Errorf("backup %q, want the user's settings", bak)
				}
			})
		})
	}
}

// TestEditSettingsStaysEmpty: an empty file is not taken for settings
// without any: bottled refuses it and leaves it as it is.
func TestEditSettingsStaysEmpty(t *testing.T) {
	for _, empty := range []string{"", "\n  \n"} {
		synctest.Test(t, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.json")
			writeSettingsFile(t, path, empty, 0o600)
			_, err := EditSettings(context.Background(), path, false, register)
			if err == nil || !strings.Contains(err.Error(), "empty") {
				t.Errorf("%q: err %v, want a refusal that says the file is empty", empty, err)
			}
			if got := readSettingsFile(t, path); got != empty {
				t.Errorf("%q: the file became %q", empty, got)
			}
			if _, err := os.Lstat(path + ".bottled.bak"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%q: a backup was written (%v)", empty, err)
			}
		})
	}
}

// TestEditSettingsConcurrentWriter runs install's and uninstall's edits
// against a writer that keeps saving a setting of its own, as Claude Code
// does, in place (truncate, then write) or atomically (a temporary file
// renamed over it), and counts the writer's updates that bottled lost.
func TestEditSettingsConcurrentWriter(t *testing.T) {
	const cycles = 40
	for _, mode := range []string{"in place", "atomic"} {
		t.Run(mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.json")
			writeSettingsFile(t, path, `{"model":"opus","env":{"ANTHROPIC_API_KEY":"sk-secret","WRITER":"0"}}`, 0o600)
			ctx, stop := context.WithCancel(context.Background())
			w := &settingsWriter{path: path, inPlace: mode == "in place"}
			done := make(chan struct{})
			go func() { // the writer, until the edits are done
				defer close(done)
				w.loop(ctx, t)
			}()
			stopWriter := func() { stop(); <-done }
			defer stopWriter() // on a failure too: the writer reports to t
			var editErrs []error
			for range cycles {
				for _, edit := range []func([]byte) ([]byte, bool, error){register, unregister} {
					if _, err := EditSettings(context.Background(), path, false, edit); err != nil {
						editErrs = append(editErrs, err)
					}
					if bak, err := os.ReadFile(path + ".bottled.bak"); err == nil {
						var m map[string]any
						if json.Unmarshal(bak, &m) != nil || m["model"] != "opus" || m["env"] == nil {
							t.Errorf("a backup lost the user's settings: %q", bak)
						}
					}
				}
			}
			stopWriter()
			t.Logf("%d writer updates, %d edits by bottled", w.updates, 2*cycles)
			if w.lost > 0 || w.wiped > 0 {
				t.Errorf("of %d writer updates, bottled lost %d and wiped the user's settings %d times", w.updates, w.lost, w.wiped)
			}
			if len(editErrs) > 0 {
				t.Errorf("%d of %d edits failed, the first: %v", len(editErrs), 2*cycles, editErrs[0])
			}
		})
	}
}

// settingsWriter stands in for Claude Code saving its settings: it reads
// the file, sets env.WRITER to its next count and writes the file back.
// Finding another count than the one it wrote last means someone replaced
// its update with an older copy.
type settingsWriter struct {
	path                 string
	inPlace              bool
	updates, lost, wiped int
	last                 int
}

func (w *settingsWriter) loop(ctx context.Context, t *testing.T) {
	for ctx.Err() == nil {
		data, err := os.ReadFile(w.path)
		if err != nil {
			t.Errorf("writer: %v", err)
			return
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Errorf("writer read a torn file: %v\n%s", err, data)
			return
		}
		env, _ := m["env"].(map[string]any)
		switch {
		case m["model"] != "opus" || env == nil:
			w.wiped++
		case env["WRITER"] != fmt.Sprint(w.last):
			w.lost++
		}
		if env == nil {
			env = map[string]any{"ANTHROPIC_API_KEY": "sk-secret"}
		}
		m["model"], m["env"] = "opus", env
		w.last++
		env["WRITER"] = fmt.Sprint(w.last)
		out, _ := json.MarshalIndent(m, "", "  ")
		if err := w.write(out); err != nil {
			t.Errorf("writer: %v", err)
			return
		}
		w.updates++
		// A writer far busier than Claude Code, which saves its settings
		// when the user changes one.
		time.Sleep(time.Duration(2+rand.IntN(18)) * time.Millisecond)
	}
}

func (w *settingsWriter) write(data []byte) error {
	if !w.inPlace {
		tmp := w.path + ".writer"
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			return err
		}
		return os.Rename(tmp, w.path)
	}
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_TRUNC|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if w.updates%4 == 0 {
		// Between the truncation and the write, as when the writer is
		// descheduled on a busy machine.
		time.Sleep(time.Millisecond)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// TestEditSettingsSymlink: a settings.json that links into a dotfiles
// folder stays a link; the file it points to gets the edit.
func TestEditSettingsSymlink(t *testing.T) {
	root := t.TempDir()
	dotfile := filepath.Join(root, "dotfiles", "claude", "settings.json")
	writeSettingsFile(t, dotfile, userSettings, 0o644)
	path := filepath.Join(root, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../dotfiles/claude/settings.json", path); err != nil {
		t.Fatal(err)
	}
	if _, err := EditSettings(context.Background(), path, false, register); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(path); err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("settings.json is no longer a link (%v)", err)
	}
	if got := settingsOf(t, readSettingsFile(t, dotfile)); got["hooks"] == nil || got["model"] != "opus" {
		t.Errorf("the dotfile did not get the hooks: %v", got)
	}
	if info, err := os.Stat(dotfile); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("dotfile mode %v (%v), want 0600", info.Mode(), err)
	}
	// The backup stays beside the link, in the config dir, not in the
	// dotfiles folder.
	if bak := readSettingsFile(t, path+".bottled.bak"); bak != userSettings {
		t.Errorf("backup %q", bak)
	}
	if _, err := os.Lstat(dotfile + ".bottled.bak"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a backup was written into the dotfiles folder")
	}
}

// TestEditSettingsCopiesArePrivate: every copy of the settings bottled
// writes is 0600, and no copy is written through a link: a stale 0644
// backup, a backup that is a link out of the config dir, a 0644
// settings.json.
func TestEditSettingsCopiesArePrivate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, path, outside string)
	}{
		{"stale 0644 backup", func(t *testing.T, path, _ string) { writeSettingsFile(t, path+".bottled.bak", "{}", 0o644) }},
		{"backup linked out of the config dir", func(t *testing.T, path, outside string) {
			if err := os.Symlink(outside, path+".bottled.bak"); err != nil {
				t.Fatal(err)
			}
		}},
		{"0644 settings", func(t *testing.T, path, _ string) {
			if err := os.Chmod(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, ".claude", "settings.json")
			outside := filepath.Join(root, "public", "notes.txt")
			writeSettingsFile(t, path, userSettings, 0o600)
			writeSettingsFile(t, outside, "mine\n", 0o644)
			tc.setup(t, path, outside)
			if _, err := EditSettings(context.Background(), path, false, register); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{path, path + ".bottled.bak"} {
				info, err := os.Lstat(p)
				if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != 0o600 {
					t.Errorf("%s: %v (%v), want a regular 0600 file", filepath.Base(p), info.Mode(), err)
				}
			}
			if got := readSettingsFile(t, outside); got != "mine\n" {
				t.Errorf("a file outside the config dir was written: %q", got)
			}
			if bak := readSettingsFile(t, path+".bottled.bak"); bak != userSettings {
				t.Errorf("backup %q", bak)
			}
		})
	}
}

// TestEditSettingsNotARegularFile: a FIFO (or anything but a regular
// file) named settings.json is refused at once, without blocking.
func TestEditSettingsNotARegularFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	if err := mkfifo(path); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	errc := make(chan error, 1)
	go func() { // abandoned if EditSettings blocks: the test fails then
		_, err := EditSettings(context.Background(), path, false, register)
		errc <- err
	}()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("err %v, want a refusal of a file that is not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close() // lets the blocked reader go
		}
		t.Fatal("EditSettings blocked on a FIFO")
	}
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
