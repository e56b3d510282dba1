package watch

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// logEvery is how many catch-up renders pass between progress log lines
// when no terminal shows a bar.
const logEvery = 100

// Terminal is a terminal that shows the start-up catch-up's progress bar
// below the log, for Config.Progress: give the logger the Terminal as its
// writer too. A log line written while the bar shows first erases the bar,
// and the bar is drawn again below it, so that the two never share a line.
// Each Write must be whole lines, as slog's handlers write a record.
//
// Its mutex guards bar and serializes writes to w: the logger writes from
// any goroutine, the progress from the daemon's loop.
type Terminal struct {
	mu  sync.Mutex
	w   io.Writer
	bar string // the bar shown on the last line, "" when none
}

// NewTerminal returns a Terminal writing to w.
func NewTerminal(w io.Writer) *Terminal { return &Terminal{w: w} }

// eraseLine moves to the start of the line and clears it (ANSI, which
// every terminal emulator in use understands).
const eraseLine = "\r\x1b[K"

// Write writes log lines above the bar.
func (t *Terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bar == "" {
		return t.w.Write(p)
	}
	if _, err := io.WriteString(t.w, eraseLine); err != nil {
		return 0, err
	}
	n, err := t.w.Write(p)
	if err == nil {
		_, err = io.WriteString(t.w, t.bar)
	}
	return n, err
}

// show draws bar in place of the one shown.
func (t *Terminal) show(bar string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.bar = bar
	io.WriteString(t.w, eraseLine+bar)
}

// end leaves the bar shown where it is, as a line of the log.
func (t *Terminal) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bar != "" {
		io.WriteString(t.w, "\n")
		t.bar = ""
	}
}

// progress shows the start-up catch-up: a bar redrawn in place on a
// terminal, else a log line every logEvery sessions and one at the end.
// It is used by the loop only.
type progress struct {
	term        *Terminal
	log         *slog.Logger
	done, total int
}

func newProgress(term *Terminal, log *slog.Logger, total int) *progress {
	p := &progress{term: term, log: log, total: total}
	if total > 0 && term == nil {
		log.Info("catching up", "sessions", total)
	}
	p.draw()
	return p
}

func (p *progress) step() {
	p.done++
	switch {
	case p.term != nil:
		p.draw()
	case p.done == p.total:
		p.log.Info("caught up", "sessions", p.total)
	case p.done%logEvery == 0:
		p.log.Info("catching up", "done", p.done, "of", p.total)
	}
}

func (p *progress) draw() {
	if p.term == nil || p.total == 0 {
		return
	}
	const width = 30
	filled := width * min(p.done, p.total) / p.total
	p.term.show(fmt.Sprintf("catching up [%s%s] %d/%d", strings.Repeat("#", filled), strings.Repeat("-", width-filled), p.done, p.total))
	if p.done >= p.total {
		p.term.end()
	}
}

// close ends the bar where it got to (the daemon stops before the
// catch-up is over), so that what is written next starts a line of its
// own.
func (p *progress) close() {
	if p.term != nil {
		p.term.end()
	}
}
