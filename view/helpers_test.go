package view

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/internal/handmade"
	"github.com/bottled-dev/bottled/render"
)

const (
	testToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	testHost  = "127.0.0.1:41234"
)

var (
	testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	day     = time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
)

// talk is a session of user and assistant turns, rendered as the daemon
// renders one (Bottle).
type talk = handmade.Session

// writeTalks writes the sessions' bottles into dataDir.
func writeTalks(t testing.TB, dataDir string, talks ...talk) {
	t.Helper()
	for _, s := range talks {
		if _, err := bottles.Open(dataDir, nil, nil).Write(s.Bottle(t, testNow)); err != nil {
			t.Fatal(err)
		}
	}
}

// writeGolden writes the golden bottle of a render case into dataDir and
// returns its session id.
func writeGolden(t testing.TB, dataDir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "render", name, "bottle.golden.md"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := render.StateOf(data)
	if err != nil {
		t.Fatal(err)
	}
	dir := bottles.BottlesDir(dataDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bottles.BottlePath(dir, st.Session), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return st.Session
}

// testServer is a view of dataDir answering at testHost, without a
// listener: requests go straight to its handler.
type testServer struct {
	t *testing.T
	s *Server
	h http.Handler
}

func newTestServer(t *testing.T, dataDir string) *testServer {
	t.Helper()
	ix, err := index.Open(context.Background(), dataDir, index.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	s := New(Config{Reader: bottles.Reader{ClaudeDir: filepath.Join(dataDir, "no-claude"), DataDir: dataDir,
		Location: time.UTC, Now: func() time.Time { return testNow }}, Project: "/nowhere", Token: testToken}, ix, testHost)
	return &testServer{t: t, s: s, h: s.Handler()}
}

// get requests path from the view as the user's browser does (its Host,
// its cookie) and returns the answer and its body.
func (ts *testServer) get(path string) (*http.Response, string) {
	ts.t.Helper()
	return ts.do(path, testHost, true)
}

func (ts *testServer) do(path, host string, cookie bool) (*http.Response, string) {
	ts.t.Helper()
	req := httptest.NewRequest(http.MethodGet, "http://"+host+path, nil)
	req.Host = host
	if cookie {
		req.AddCookie(&http.Cookie{Name: ts.s.cookieName(), Value: testToken})
	}
	rec := httptest.NewRecorder()
	ts.h.ServeHTTP(rec, req)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// mustContain fails t for each of want that body lacks.
func mustContain(t *testing.T, what, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

func mustNotContain(t *testing.T, what, body string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(body, b) {
			t.Errorf("%s holds %q", what, b)
		}
	}
}

func fmtSscan(s string, n *int) (int, error) { return fmt.Sscan(strings.TrimLeft(s, "L"), n) }

// replaceBottle renames a new bottle of the session into place, as every
// writer does (Store.Write would keep the one there: a talk's spine
// records no transcript, so neither bottle is newer).
func replaceBottle(t testing.TB, dataDir string, s talk) {
	t.Helper()
	dir := bottles.BottlesDir(dataDir)
	tmp := filepath.Join(dir, ".tmp-"+s.ID)
	if err := os.WriteFile(tmp, s.Bottle(t, testNow).Bytes, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, bottles.BottlePath(dir, s.ID)); err != nil {
		t.Fatal(err)
	}
}
