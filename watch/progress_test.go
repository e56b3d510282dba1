package watch

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// screen plays what was written to a terminal (carriage returns, erase
// to the end of the line, newlines) and returns the lines it shows.
func screen(out string) []string {
	lines := [][]rune{nil}
	col := 0
	for i := 0; i < len(out); {
		switch {
		case strings.HasPrefix(out[i:], "\x1b[K"):
			cur := &lines[len(lines)-1]
			*cur = (*cur)[:min(col, len(*cur))]
			i += 3
			continue
		case out[i] == '\r':
			col = 0
		case out[i] == '\n':
			lines, col = append(lines, nil), 0
		default:
			r := []rune(out[i:])[0]
			cur := &lines[len(lines)-1]
			if col < len(*cur) {
				(*cur)[col] = r
			} else {
				*cur = append(*cur, r)
			}
			col++
			i += len(string(r))
			continue
		}
		i++
	}
	var shown []string
	for _, l := range lines {
		shown = append(shown, string(l))
	}
	return shown
}

func TestProgress(t *testing.T) {
	t.Run("terminal", func(t *testing.T) {
		// The log writes to the same terminal as the bar: each line of
		// either is whole, alone on its line, and the bar stays below.
		var out bytes.Buffer
		term := NewTerminal(&out)
		log := slog.New(slog.NewTextHandler(term, nil))
		p := newProgress(term, log, 4)
		for i := range 4 {
			log.Info("a log line", "n", i)
			p.step()
		}
		log.Info("after the catch-up")
		got := screen(out.String())
		want := []string{
			`level=INFO msg="a log line" n=0`, `level=INFO msg="a log line" n=1`, `level=INFO msg="a log line" n=2`,
			`level=INFO msg="a log line" n=3`, "catching up [##############################] 4/4",
			`level=INFO msg="after the catch-up"`, "",
		}
		if len(got) != len(want) {
			t.Fatalf("the terminal shows %d lines, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
		}
		for i := range want {
			if strings.HasPrefix(got[i], "time=") {
				_, got[i], _ = strings.Cut(got[i], " ") // the time varies
			}
			if got[i] != want[i] {
				t.Errorf("line %d: %q, want %q", i, got[i], want[i])
			}
		}
	})
	t.Run("stopped midway", func(t *testing.T) {
		var out bytes.Buffer
		term := NewTerminal(&out)
		p := newProgress(term, slog.New(slog.DiscardHandler), 4)
		p.step()
		p.close()
		slog.New(slog.NewTextHandler(term, nil)).Info("bottled stopped")
		got := screen(out.String())
		if len(got) != 3 || got[0] != "catching up [#######-----------------------] 1/4" || !strings.Contains(got[1], "bottled stopped") {
			t.Errorf("the terminal shows:\n%s", strings.Join(got, "\n"))
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
