package inject

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"
)

// SessionEndTimeout bounds the SessionEnd hook's whole run, well inside
// what Claude Code gives it: 5 s as install registers it (endTimeout), and
// 1.5 s, Claude Code's default for SessionEnd hooks, when registered by
// hand without a timeout.
const SessionEndTimeout = time.Second

// ErrNoAnswer reports a hook that gave up: its work was not done by its
// deadline, or the hook was told to stop (SIGTERM). It prints nothing,
// and Claude Code goes on as without bottled.
var ErrNoAnswer = errors.New("no answer")

// SessionStartFrom reads a SessionStart payload from r and answers it
// (see SessionStart) within cfg.Timeout from its call, stdin's read
// included (see bounded).
func SessionStartFrom(ctx context.Context, cfg Config, r io.Reader) ([]byte, error) {
	cfg.defaults()
	var cut func()
	cfg.Log, cut = cutOff(cfg.Log)
	defer cut()
	return bounded(ctx, cfg.Timeout, func(ctx context.Context) ([]byte, error) {
		p, err := ReadPayload(r)
		if err != nil {
			return nil, err
		}
		return SessionStart(ctx, cfg, p)
	})
}

// SessionEndFrom reads a SessionEnd payload from r and answers it (see
// SessionEnd) within SessionEndTimeout from its call.
func SessionEndFrom(ctx context.Context, cfg Config, r io.Reader) error {
	cfg.defaults()
	var cut func()
	cfg.Log, cut = cutOff(cfg.Log)
	defer cut()
	_, err := bounded(ctx, SessionEndTimeout, func(ctx context.Context) ([]byte, error) {
		p, err := ReadPayload(r)
		if err != nil {
			return nil, err
		}
		return nil, SessionEnd(ctx, cfg, p)
	})
	return err
}

// bounded runs work, a hook's whole run, and returns its answer, or an
// error wrapping ErrNoAnswer once limit has passed or ctx is done (the
// hook was told to stop), whatever work is doing then: Claude Code waits
// for the hook, and a read that the disk does not answer (a file system
// that hangs, a database locked by its writer) cannot hold up its
// session. work's context carries the same deadline, for the parts that
// can stop early. The goroutine running work is not waited for when the
// deadline passes: the hook's process exits right after, which ends it; a
// system call cannot be interrupted otherwise.
func bounded(ctx context.Context, limit time.Duration, work func(context.Context) ([]byte, error)) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	type answer struct {
		out []byte
		err error
	}
	done := make(chan answer, 1)
	go func() {
		out, err := work(ctx)
		done <- answer{out, err}
	}()
	select {
	case a := <-done:
		return a.out, a.err
	case <-ctx.Done():
	}
	select {
	case a := <-done: // done at the deadline: still in time
		return a.out, a.err
	default:
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("%w within the hook's deadline of %v (reading stdin, a file or claude-mem's database took longer)", ErrNoAnswer, limit)
	}
	return nil, fmt.Errorf("%w: stopped (%v)", ErrNoAnswer, context.Cause(ctx))
}

// cutOff returns a logger that logs to log until cut is called, and drops
// what comes after: the work a hook gave up on goes on in its goroutine
// (see bounded), and must not write to the caller's stderr once the hook
// has answered. cut waits for a record being written.
func cutOff(log *slog.Logger) (_ *slog.Logger, cut func()) {
	h := &cutHandler{Handler: log.Handler(), state: &cutState{}}
	return slog.New(h), func() {
		h.state.mu.Lock()
		defer h.state.mu.Unlock()
		h.state.cut = true
	}
}

// cutState is shared by a cutHandler and those derived from it; mu
// guards cut and is held while a record is written.
type cutState struct {
	mu  sync.Mutex
	cut bool
}

type cutHandler struct {
	slog.Handler
	state *cutState
}

func (h *cutHandler) Handle(ctx context.Context, r slog.Record) error {
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	if h.state.cut {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h *cutHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &cutHandler{Handler: h.Handler.WithAttrs(as), state: h.state}
}

func (h *cutHandler) WithGroup(name string) slog.Handler {
	return &cutHandler{Handler: h.Handler.WithGroup(name), state: h.state}
}
