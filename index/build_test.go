package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
)

// buildCorpus writes n sessions' bottles, session i with the word
// "uniq<i>" of its own and the word "common", their files modified an
// hour apart in order (session n-1 the newest, an hour ago), and returns
// the data directory.
func buildCorpus(t *testing.T, n int) string {
	t.Helper()
	data := t.TempDir()
	base := time.Now().Add(-time.Duration(n) * time.Hour)
	for i := range n {
		s := talk{ID: fmt.Sprintf("s%02d", i), CWD: "/p", Start: day.Add(time.Duration(i) * time.Hour), Turns: [][2]string{
			{fmt.Sprintf("question uniq%d common", i), "answer common"},
			{"more", fmt.Sprintf("second answer uniq%d", i)},
		}}
		writeBottles(t, data, s.Bottle(t, testNow))
		at := base.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(bottles.BottlePath(bottles.BottlesDir(data), s.ID), at, at); err != nil {
			t.Fatal(err)
		}
	}
	return data
}

// ticking is a clock that moves a second each time it is read.
func ticking() func() time.Time {
	now := day
	return func() time.Time {
		now = now.Add(time.Second)
		return now
	}
}

// found returns the sessions whose own word a search finds.
func found(t *testing.T, ix *Index, n int) []int {
	t.Helper()
	var out []int
	for i := range n {
		if len(search(t, ix, fmt.Sprintf("uniq%d", i), Scope{})) > 0 {
			out = append(out, i)
		}
	}
	return out
}

// checkBuilt fails unless ix's build is finished and ix finds each of the
// n sessions; when says after what.
func checkBuilt(t *testing.T, ix *Index, n int, when string) {
	t.Helper()
	if st := building(t, ix); st != nil {
		t.Errorf("%s: build state %+v, want a finished build", when, st)
	}
	if got := found(t, ix, n); len(got) != n {
		t.Errorf("%s: found %v, want all %d", when, got, n)
	}
}

func building(t *testing.T, ix *Index) *BuildState {
	t.Helper()
	st, err := ix.Building(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestBuildNewestFirst: a build bounded in time takes in the newest
// bottles first and stops, leaving an index that answers from them and
// says how far it got; the next opening continues where it stopped, and
// Build finishes it, into exactly the index a build in one go makes, with
// its rows numbered oldest bottle first.
func TestBuildNewestFirst(t *testing.T) {
	const n = 10
	data := buildCorpus(t, n)
	// One bottle per step; the clock is read once at the start and once
	// after each step, so 3 s allow three steps.
	opts := Options{Location: time.UTC, BuildFor: 3 * time.Second, Now: ticking(), chunk: 1}
	ix, err := Open(context.Background(), data, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if got := found(t, ix, n); !slices.Equal(got, []int{7, 8, 9}) {
		t.Errorf("after a bounded build, found the words of sessions %v, want the newest three", got)
	}
	if st := building(t, ix); st == nil || st.Indexed != 3 || st.Total != n || st.Active || st.Percent() != 30 {
		t.Errorf("build state %+v, want 3 of %d, not active", st, n)
	}
	if len(search(t, ix, "common", Scope{Limit: MaxLimit})) != 6 {
		t.Errorf("a common word is not found in every block indexed")
	}

	again, err := Open(context.Background(), data, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if got := found(t, again, n); !slices.Equal(got, []int{4, 5, 6, 7, 8, 9}) {
		t.Errorf("after a second bounded build, found %v", got)
	}
	if err := again.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkBuilt(t, ix, n, "after a Build by another opening")

	whole := t.TempDir()
	if err := os.CopyFS(bottles.BottlesDir(whole), os.DirFS(bottles.BottlesDir(data))); err != nil {
		t.Fatal(err)
	}
	want := dumpIndex(t, openIndex(t, whole))
	got := dumpIndex(t, ix)
	sameLists(t, "blocks", got.docs, want.docs)
	sameLists(t, "words", got.words, want.words)
	checkRowOrder(t, ix)
}

// checkRowOrder checks that the index numbers rows in the order the
// bottles were written and their blocks stand: by file time, then
// position.
func checkRowOrder(t *testing.T, ix *Index) {
	t.Helper()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	// pathsBy lists the bottle of every row, in the order it names.
	pathsBy := func(order string) []string {
		st, _, err := ix.conn.Prepare(`SELECT b.path FROM docs d JOIN bottles b ON b.id = d.bottle ORDER BY ` + order)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var paths []string
		for st.Step() {
			paths = append(paths, st.ColumnText(0))
		}
		return paths
	}
	byTime, byRow := pathsBy("b.mtime, b.path, d.seq"), pathsBy("d.id")
	if !slices.Equal(byTime, byRow) {
		t.Errorf("rows out of the bottles' order:\nby row  %v\nby time %v", byRow, byTime)
	}
}

// TestSearchWhileAnotherBuilds: while another process builds the index, a
// bounded opening does not wait for it, and answers from what it indexed,
// saying it is at work; once that process stops, Build continues where it
// stopped.
func TestSearchWhileAnotherBuilds(t *testing.T) {
	const n = 6
	data := buildCorpus(t, n)
	first, err := Open(context.Background(), data, Options{Location: time.UTC, BuildFor: 2 * time.Second, Now: ticking(), chunk: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	// Another process takes the lock to go on building.
	unlock := lockAsBuilder(t, data)
	waited := 0
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reader, err := Open(ctx, data, Options{Location: time.UTC, BuildFor: time.Second, Waiting: func() { waited++ }})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if waited != 0 {
		t.Errorf("a bounded opening waited for the other builder")
	}
	if got := found(t, reader, n); !slices.Equal(got, []int{4, 5}) {
		t.Errorf("found %v, want the newest two", got)
	}
	if st := building(t, reader); st == nil || !st.Active || st.Indexed != 2 || st.Total != n {
		t.Errorf("build state %+v, want 2 of %d, active", st, n)
	}
	// An opening that builds to the end waits for the other process.
	short, cancelShort := context.WithCancel(context.Background())
	cancelShort()
	if _, err := Open(short, data, Options{Location: time.UTC}); !errors.Is(err, ErrBuilding) {
		t.Errorf("an unbounded opening while another builds: %v, want ErrBuilding", err)
	}
	unlock()
	if err := reader.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkBuilt(t, first, n, "after the other opening's Build, the first")
}

// interruptBuild opens the index of dataDir with opts and ends the
// opening's context when its build has taken in its after-th bottle (as
// Progress says), as a crash would: the opening must fail with the
// context's end.
func interruptBuild(t *testing.T, dataDir string, opts Options, after int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	taken := 0
	opts.Progress = func(int64, int64) {
		if taken++; taken == after {
			cancel()
		}
	}
	if _, err := Open(ctx, dataDir, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted build: %v, want the context's end", err)
	}
}

// TestBuildInterrupted: a build stopped in the middle of a step (its
// context ended; a crash is the same to SQLite: a transaction that never
// commits) keeps what the steps before committed, never looks finished,
// and is continued by the next opening.
func TestBuildInterrupted(t *testing.T) {
	const n = 6
	data := buildCorpus(t, n)
	info, err := os.Stat(bottles.BottlePath(bottles.BottlesDir(data), "s00"))
	if err != nil {
		t.Fatal(err)
	}
	// Three bottles per step (theirs are all the same size); stopped at
	// the first bottle of the second step.
	interruptBuild(t, data, Options{Location: time.UTC, chunk: 3 * info.Size()}, 4)
	// Looked at without building: another process holds the lock.
	unlock := lockAsBuilder(t, data)
	ix := openIndexWith(t, data, Options{Location: time.UTC, BuildFor: time.Second})
	st := building(t, ix)
	if st == nil || st.Indexed != 3 {
		t.Fatalf("after the interruption: %+v, want an unfinished build of its first step's 3 bottles", st)
	}
	first := st.Indexed
	if got := found(t, ix, n); len(got) != first || got[0] != n-first {
		t.Errorf("found %v, want the newest %d", got, first)
	}
	unlock()
	if err := ix.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkBuilt(t, ix, n, "after Build")
	checkRowOrder(t, ix)
}

// TestBuildTakesInChanges: bottles written, rewritten and deleted while a
// build is unfinished are searchable (or gone) at once behind its
// frontier, and the build takes in the rest.
func TestBuildTakesInChanges(t *testing.T) {
	const n = 6
	data := buildCorpus(t, n)
	ix := openIndexWith(t, data, Options{Location: time.UTC, BuildFor: 2 * time.Second, Now: ticking(), chunk: 1})
	dir := bottles.BottlesDir(data)
	// A new session, an old one resumed (rewritten, so newer now), one
	// taken in already deleted.
	fresh := talk{ID: "s-new", CWD: "/p", Start: day, Turns: [][2]string{{"brand new uniqfresh", "ok"}}}
	writeBottles(t, data, fresh.Bottle(t, testNow))
	resumed := talk{ID: "s00", CWD: "/p", Start: day, Turns: [][2]string{{"question uniq0 common", "answer"}, {"resumed uniqresumed", "ok"}}}
	if err := replaceFile(bottles.BottlePath(dir, "s00"), resumed.Bottle(t, testNow).Bytes); err != nil {
		t.Fatal(err)
	}
	os.Remove(bottles.BottlePath(dir, "s05"))
	for _, w := range []string{"uniqfresh", "uniqresumed", "uniq0"} {
		if len(search(t, ix, w, Scope{})) == 0 {
			t.Errorf("%q, written during the build, is not found", w)
		}
	}
	if len(search(t, ix, "uniq5", Scope{})) != 0 {
		t.Errorf("a deleted bottle is still found")
	}
	if got := found(t, ix, n); !slices.Equal(got, []int{0, 4}) {
		t.Errorf("found %v", got)
	}
	if err := ix.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := found(t, ix, n); !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
		t.Errorf("after Build, found %v", got)
	}
}

// TestPurgeDuringBuild: a purge asked while a build is unfinished removes
// the redacted words from the index's files at once, and the build goes
// on.
func TestPurgeDuringBuild(t *testing.T) {
	const secret = "zqxbuildsecretzq"
	const n = 4
	data := buildCorpus(t, n)
	s := talk{ID: "s-secret", CWD: "/p", Start: day, Turns: [][2]string{{"the key is " + secret, "noted"}}}
	writeBottles(t, data, s.Bottle(t, testNow))
	ix := openIndexWith(t, data, Options{Location: time.UTC, BuildFor: 2 * time.Second, Now: ticking(), chunk: 1})
	if !filesHold(t, Dir(data), secret) || building(t, ix) == nil {
		t.Fatal("the secret's bottle is not in the unfinished index")
	}
	redactBottle(t, data, &s, secret)
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if filesHold(t, Dir(data), secret) {
		t.Error("the index's files still hold the redacted word")
	}
	if building(t, ix) == nil {
		t.Fatal("the purge finished the build")
	}
	if err := ix.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := found(t, ix, n); len(got) != n || filesHold(t, Dir(data), secret) {
		t.Errorf("after Build: found %v", got)
	}
}

// TestPurgeAnsweredByTheBuild: a purge asked while another process builds
// the index is left to the builder, which purges at its next step and
// removes the request; the sync says it could not purge (ErrPurgeBusy).
func TestPurgeAnsweredByTheBuild(t *testing.T) {
	const secret = "zqxbuildersecretzq"
	data := buildCorpus(t, 4)
	s := talk{ID: "s-secret", CWD: "/p", Start: day, Turns: [][2]string{{"the key is " + secret, "noted"}}}
	writeBottles(t, data, s.Bottle(t, testNow))
	ix := openIndexWith(t, data, Options{Location: time.UTC, BuildFor: 2 * time.Second, Now: ticking(), chunk: 1})
	redactBottle(t, data, &s, secret)
	unlock := lockAsBuilder(t, data)
	if err := ix.Sync(context.Background()); !errors.Is(err, ErrPurgeBusy) {
		t.Fatalf("Sync while another process builds = %v; want ErrPurgeBusy", err)
	}
	if len(search(t, ix, secret, Scope{})) != 0 {
		t.Error("the redacted word is still found")
	}
	if !markerThere(t, data) || !filesHold(t, Dir(data), secret) {
		t.Fatal("a sync purged while another process built")
	}
	unlock()
	if err := ix.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	if filesHold(t, Dir(data), secret) {
		t.Error("the index's files still hold the redacted word after the build")
	}
	if markerThere(t, data) {
		t.Error("the request is still there")
	}
}

// TestWrittenDuringBuildFoundAtOnce: a bottle written after a build began
// is indexed by the next query, before the build gets to the older ones,
// even when the build has committed nothing yet.
func TestWrittenDuringBuildFoundAtOnce(t *testing.T) {
	const n = 3
	data := buildCorpus(t, n)
	interruptBuild(t, data, Options{Location: time.UTC}, 1)
	unlock := lockAsBuilder(t, data)
	defer unlock()
	writeBottles(t, data, talk{ID: "s-new", CWD: "/p", Start: day, Turns: [][2]string{{"brand new uniqfresh", "ok"}}}.Bottle(t, testNow))
	ix := openIndexWith(t, data, Options{Location: time.UTC, BuildFor: time.Second})
	if len(search(t, ix, "uniqfresh", Scope{})) != 1 || len(found(t, ix, n)) != 0 {
		t.Errorf("the new bottle is not found alone")
	}
	if st := building(t, ix); st == nil || st.Indexed != 1 || st.Total != n+1 || !st.Active {
		t.Errorf("build state %+v, want 1 of %d", st, n+1)
	}
}

// TestBuildEndStopsWithItsContext: a build whose context ends as it
// reaches its end (every bottle taken in, the merge not begun) stops there,
// says why, and leaves the build unfinished, never half merged; the next
// build finishes it.
func TestBuildEndStopsWithItsContext(t *testing.T) {
	const n = 3
	data := buildCorpus(t, n)
	interruptBuild(t, data, Options{Location: time.UTC, chunk: 1}, n) // stopped after its last bottle
	unlock := lockAsBuilder(t, data)
	ix := openIndexWith(t, data, Options{Location: time.UTC, BuildFor: time.Second})
	if st := building(t, ix); st == nil || st.Indexed != n {
		t.Fatalf("after the interruption: %+v, want an unfinished build of all %d bottles", st, n)
	}
	unlock()
	unlock, ok, err := tryLock(filepath.Join(ix.dir, lockFile))
	if err != nil || !ok {
		t.Fatalf("the build lock: %v, %v", ok, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ix.mu.Lock()
	err = ix.finishBuild(ctx)
	ix.mu.Unlock()
	unlock()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("the build's end with its context ended = %v, want context.Canceled", err)
	}
	if building(t, ix) == nil {
		t.Fatal("the build's end ran on after its context ended")
	}
	if err := ix.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkBuilt(t, ix, n, "after Build")
}
