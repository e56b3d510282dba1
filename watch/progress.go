package watch

import (
	"fmt"
	"io"
	"log/slog"
)

// logEvery is how many catch-up renders pass between progress log lines
// when no terminal shows a bar.
const logEvery = 100

// progress shows the start-up catch-up: a bar redrawn in place on a
// terminal, else a log line every logEvery sessions and one at the end.
// It is used by the loop only.
type progress struct {
	term        io.Writer
	log         *slog.Logger
	done, total int
}

func newProgress(term io.Writer, log *slog.Logger, total int) *progress {
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
	filled := width * p.done / p.total
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = '-'
		if i < filled {
			bar[i] = '#'
		}
	}
	fmt.Fprintf(p.term, "\rcatching up [%s] %d/%d", bar, p.done, p.total)
	if p.done >= p.total {
		fmt.Fprintln(p.term)
	}
}
