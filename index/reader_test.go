package index

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOpenForReader: a build a reader's context stopped is no failure to
// log, and stays unfinished; the index a reader opens then finds every
// session once its build is finished, logging nothing; an index that
// cannot be opened says so.
func TestOpenForReader(t *testing.T) {
	const n = 4
	data := buildCorpus(t, n)
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	partial := openIndexWith(t, data, Options{Location: time.UTC, BuildFor: 2 * time.Second, Now: ticking(), chunk: 1})
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	partial.FinishBuild(stopped, logger)
	if building(t, partial) == nil {
		t.Fatal("the build is over: nothing was left for the reader to stop")
	}
	partial.Close()

	ix, err := OpenForReader(context.Background(), data, time.UTC, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ix.FinishBuild(context.Background(), logger)
	if got := found(t, ix, n); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Errorf("found %v", got)
	}
	if log.Len() > 0 {
		t.Errorf("logged %q", log.String())
	}

	blocked := t.TempDir()
	if err := os.WriteFile(Dir(blocked), []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ix, err := OpenForReader(context.Background(), blocked, time.UTC, logger); err == nil || !strings.HasPrefix(err.Error(), "open the search index: ") {
		if ix != nil {
			ix.Close()
		}
		t.Errorf("opened over a file: %v", err)
	}
}
