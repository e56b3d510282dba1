package watch

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestProgress(t *testing.T) {
	t.Run("terminal", func(t *testing.T) {
		var term bytes.Buffer
		p := newProgress(&term, slog.New(slog.DiscardHandler), 4)
		for range 4 {
			p.step()
		}
		out := term.String()
		if !strings.Contains(out, "\rcatching up [") || !strings.HasSuffix(out, "4/4\n") || strings.Count(out, "\r") != 5 {
			t.Errorf("bar output = %q", out)
		}
	})
	t.Run("log", func(t *testing.T) {
		var logs bytes.Buffer
		p := newProgress(nil, slog.New(slog.NewTextHandler(&logs, nil)), 2*logEvery+1)
		for range 2*logEvery + 1 {
			p.step()
		}
		if n := strings.Count(logs.String(), "\n"); n != 4 { // start, two steps, end
			t.Errorf("%d log lines, want 4:\n%s", n, logs.String())
		}
		if !strings.Contains(logs.String(), `msg="caught up"`) {
			t.Errorf("no final line:\n%s", logs.String())
		}
	})
}
