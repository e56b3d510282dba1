package index

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"
	"golang.org/x/sync/errgroup"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// The corpus of BenchmarkSearch and BenchmarkRebuild: generated sessions,
// rendered as bottles. BOTTLED_BENCH_CORPUS names a directory to keep it
// in between runs (it is generated there once); otherwise it is generated
// in a temporary directory each run.
var (
	benchSessions = flag.Int("corpus.sessions", 5000, "sessions in the search benchmark's corpus")
	benchMB       = flag.Int("corpus.mb", 1000, "megabytes of bottles in the search benchmark's corpus")
	rebuildMB     = flag.Int("rebuild.mb", 200, "megabytes of bottles BenchmarkRebuild indexes")
	benchQueries  = flag.Int("search.queries", 300, "queries per scope in BenchmarkSearch")
)

// words draws text from a vocabulary with the long-tailed frequencies of
// natural language and code (Zipf's law): a few words are in almost every
// message, most in a few.
type words struct {
	vocab []string
	zipf  *rand.Zipf
	rng   *rand.Rand
	langs []*language // Chinese, Japanese, Korean (see languageOf)
}

const vocabSize = 200_000

func newWords(seed int64) *words {
	rng := rand.New(rand.NewSource(seed))
	vocab := make([]string, vocabSize)
	seen := map[string]bool{}
	const letters = "etaoinshrdlucmfwypvbgkjqxz"
	for i := range vocab {
		for {
			n := 2 + min(i/2000, 6) + rng.Intn(4) // frequent words are short
			b := make([]byte, n)
			for j := range b {
				b[j] = letters[min(int(rng.ExpFloat64()*6), len(letters)-1)]
			}
			if w := string(b); !seen[w] {
				seen[w] = true
				vocab[i] = w
				break
			}
		}
	}
	return &words{vocab: vocab, rng: rng, zipf: rand.NewZipf(rng, 1.07, 2, vocabSize-1)}
}

// text writes about n bytes of sentences.
func (w *words) text(n int) string {
	var b strings.Builder
	b.Grow(n + 16)
	for b.Len() < n {
		for k := 4 + w.rng.Intn(16); k > 0; k-- {
			b.WriteString(w.vocab[w.zipf.Uint64()])
			b.WriteByte(' ')
		}
		b.WriteString(".\n")
		if w.rng.Intn(6) == 0 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// spine is a generated session of about size bytes of conversation, in
// English, or in the language of lang when it is not nil.
func (w *words) spine(id, cwd string, start time.Time, size int, lang *language) *sources.Spine {
	sp := &sources.Spine{SessionID: id, CWD: cwd, Started: start}
	text := w.text
	if lang != nil {
		text = func(n int) string { return lang.text(n, w) }
	}
	at := start
	for n := 0; n < size; {
		user := text(40 + w.rng.Intn(800))
		answer := text(200 + w.rng.Intn(4000))
		sp.Entries = append(sp.Entries,
			sources.Entry{Kind: sources.EntryUser, Time: at, Text: user},
			sources.Entry{Kind: sources.EntryAssistant, Time: at.Add(time.Minute), Text: answer})
		at = at.Add(time.Duration(5+w.rng.Intn(60)) * time.Minute)
		n += len(user) + len(answer)
		if w.rng.Intn(40) == 0 {
			sp.Entries = append(sp.Entries, sources.Entry{Kind: sources.EntryCompaction, Time: at, Trigger: "auto"})
		}
	}
	return sp
}

// corpus makes (or finds) a data directory of generated bottles: sessions
// in 50 projects, sizes spread around mb/sessions (log-normal, as real
// sessions are), one in six of them in Chinese, Japanese or Korean (see
// languages), and returns it with the words they were drawn from.
func corpus(b *testing.B, sessions, mb int) (string, *words) {
	b.Helper()
	w := newWords(1)
	data := os.Getenv("BOTTLED_BENCH_CORPUS")
	if data == "" {
		data = b.TempDir()
	} else {
		data = filepath.Join(data, fmt.Sprintf("%d-%dMB-cjk", sessions, mb))
	}
	dir := bottles.BottlesDir(data)
	if entries, _ := os.ReadDir(dir); len(entries) >= sessions {
		return data, w
	}
	mean := float64(mb) * 1e6 / float64(sessions)
	base := time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC)
	for i := range sessions {
		size := int(mean * w.rng.ExpFloat64())
		size = max(min(size, 40<<20), 2000)
		id := fmt.Sprintf("%08x-bench-4000-8000-%012d", i, i)
		sp := w.spine(id, fmt.Sprintf("/home/u/project%02d", i%50), base.Add(time.Duration(i)*2*time.Hour), size, w.languageOf(i))
		bt, err := render.Render(render.Input{SessionID: id, Spine: sp, Now: base, Location: time.UTC})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := bottles.Open(filepath.Dir(dir), nil, nil).Write(bt); err != nil {
			b.Fatal(err)
		}
	}
	return data, w
}

func dirBytes(b *testing.B, dir string) int64 {
	var n int64
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n
}

// BenchmarkSearch searches a corpus of -corpus.sessions sessions holding
// -corpus.mb of bottles (5,000 and 1 GB by default), warm, as the MCP
// server does (the index open and following the bottles directory): words
// drawn at every frequency, pairs of words, and phrases taken from the
// bottles, over one project and over all. It reports the median and 99th
// percentile latency of each scope. The first run builds the index, which
// is not timed (see BenchmarkRebuild).
func BenchmarkSearch(b *testing.B) {
	data, w := corpus(b, *benchSessions, *benchMB)
	ctx := context.Background()
	ix, err := Open(ctx, data, Options{Location: time.UTC})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Watch(); err != nil {
		b.Fatal(err)
	}
	queries := benchQueryMix(w, *benchQueries)
	scopes := []struct {
		name  string
		scope Scope
	}{{"project", Scope{Project: "/home/u/project07"}}, {"all", Scope{}}}
	// Warm: the first query syncs the index with the directory and reads
	// its pages into the cache; each scope is run once untimed.
	for _, s := range scopes {
		for _, q := range queries {
			if _, err := ix.Search(ctx, q, s.scope); err != nil {
				b.Fatal(err)
			}
		}
	}
	// The search runs on the calling goroutine, SQLite included, so the
	// CPU time of its thread is what a query cost, whatever else the
	// machine's cores were busy with.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var all []queryTiming
	for b.Loop() {
		for _, s := range scopes {
			var wall, cpu, alone, aloneCPU []time.Duration
			hits := 0
			all = all[:0]
			for _, q := range queries {
				t, err := measure(func() error {
					h, err := ix.Search(ctx, q, s.scope)
					hits += len(h)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				wall, cpu = append(wall, t.wall), append(cpu, t.cpu)
				if s.scope.dir() != "" {
					continue
				}
				a, err := measure(func() error { return fts5Matches(ctx, ix, q) })
				if err != nil {
					b.Fatal(err)
				}
				alone, aloneCPU = append(alone, a.wall), append(aloneCPU, a.cpu)
				all = append(all, queryTiming{q, t, a})
			}
			reportPercentiles(b, s.name, wall, cpu)
			if len(alone) > 0 {
				reportPercentiles(b, "fts5-"+s.name, alone, aloneCPU)
			}
			b.ReportMetric(float64(hits)/float64(len(queries)), s.name+"-hits/query")
		}
	}
	logSlowest(b, ctx, ix, all, 8)
	st, err := ix.Stats(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(dirBytes(b, bottles.BottlesDir(data)))/1e6, "bottles-MB")
	b.ReportMetric(float64(st.Bottles), "bottles")
	b.ReportMetric(float64(st.Bytes)/1e6, "index-MB")

	// A query as the CLI runs it: the whole bottles directory is checked
	// first (a stat per bottle), since no watcher ran before it.
	cli, err := Open(ctx, data, Options{Location: time.UTC})
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Close()
	var ds []time.Duration
	for range 20 {
		start := time.Now()
		if err := cli.Sync(ctx); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	b.ReportMetric(ms(ds[len(ds)/2]), "full-sync-ms")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// timing is what one query took: wall-clock time, and the CPU time of
// its thread (zero where that is not measured).
type timing struct{ wall, cpu time.Duration }

// measure runs fn and times it; the caller has its goroutine locked to
// its thread.
func measure(fn func() error) (timing, error) {
	cpu0, _ := threadCPU()
	start := time.Now()
	err := fn()
	t := timing{wall: time.Since(start)}
	if cpu, ok := threadCPU(); ok {
		t.cpu = cpu - cpu0
	}
	return t, err
}

// reportPercentiles reports the median and 99th percentile of the wall
// and CPU times of a scope's queries.
func reportPercentiles(b *testing.B, name string, wall, cpu []time.Duration) {
	at := func(ds []time.Duration, p int) float64 {
		ds = slices.Sorted(slices.Values(ds))
		return ms(ds[len(ds)*p/100])
	}
	b.ReportMetric(at(wall, 50), name+"-p50-ms")
	b.ReportMetric(at(wall, 99), name+"-p99-ms")
	if _, ok := threadCPU(); ok {
		b.ReportMetric(at(cpu, 50), name+"-cpu-p50-ms")
		b.ReportMetric(at(cpu, 99), name+"-cpu-p99-ms")
	}
}

// fts5Matches runs a query's FTS5 part alone, over all projects: the
// newest candidateCap rows that match, in the order a search reads them,
// with no ranking, no join with the bottles and no bottle read. No search
// through FTS5 can cost less.
func fts5Matches(ctx context.Context, ix *Index, q string) error {
	expr := searchExpr(parseQuery(q), Scope{})
	return ix.do(ctx, func() error {
		return ix.query(`SELECT rowid FROM text WHERE text MATCH ? ORDER BY rowid DESC LIMIT ?`,
			func(*sqlite3.Stmt) error { return nil }, expr, candidateCap)
	})
}

// queryTiming is one query over all projects: the search, and FTS5 alone
// finding its matches.
type queryTiming struct {
	query         string
	search, alone timing
}

// logSlowest logs the n slowest searches over all projects, with what
// makes them slow: how many rows match, and how many hold each word
// (FTS5's own counts, from an fts5vocab table).
func logSlowest(b *testing.B, ctx context.Context, ix *Index, all []queryTiming, n int) {
	slices.SortFunc(all, func(x, y queryTiming) int { return cmp.Compare(y.search.wall, x.search.wall) })
	err := ix.do(ctx, func() error {
		if err := ix.conn.Exec(`CREATE VIRTUAL TABLE temp.bench_vocab USING fts5vocab(main, 'text', 'row')`); err != nil {
			return err
		}
		defer ix.conn.Exec(`DROP TABLE temp.bench_vocab`)
		count := func(sql string, arg string) (int64, error) {
			var n int64
			err := ix.query(sql, func(s *sqlite3.Stmt) error {
				n = s.ColumnInt64(0)
				return nil
			}, arg)
			return n, err
		}
		for _, q := range all[:min(n, len(all))] {
			ps := parseQuery(q.query)
			matches, err := count(`SELECT count(*) FROM text WHERE text MATCH ?`, searchExpr(ps, Scope{}))
			if err != nil {
				return err
			}
			var words []string
			for _, p := range ps {
				for _, tok := range p.tokens {
					rows, err := count(`SELECT coalesce(sum(doc), 0) FROM temp.bench_vocab WHERE term = ?`, tok)
					if err != nil {
						return err
					}
					words = append(words, fmt.Sprintf("%s %d", tok, rows))
				}
			}
			b.Logf("%s: %.0f ms (CPU %.0f ms; FTS5 alone %.0f ms, CPU %.0f ms), %d matching rows; rows holding each word: %s",
				q.query, ms(q.search.wall), ms(q.search.cpu), ms(q.alone.wall), ms(q.alone.cpu), matches, strings.Join(words, ", "))
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// benchQueryMix draws n queries: single words from the most frequent to
// the rarest, pairs, phrases as they occur in the generated text, and one
// in six in Chinese, Japanese or Korean (see cjkQuery).
func benchQueryMix(w *words, n int) []string {
	rng := rand.New(rand.NewSource(2))
	var out []string
	for i := range n {
		switch i % 6 {
		case 5:
			out = append(out, w.cjkQuery(i/6, rng))
		case 0: // a common word (rank 10–1,000)
			out = append(out, w.vocab[10+rng.Intn(990)])
		case 1: // a middling word (rank 1,000–20,000)
			out = append(out, w.vocab[1000+rng.Intn(19000)])
		case 2: // a rare word
			out = append(out, w.vocab[20000+rng.Intn(vocabSize-20000)])
		case 3: // two words
			out = append(out, w.vocab[100+rng.Intn(5000)]+" "+w.vocab[1000+rng.Intn(50000)])
		case 4: // a phrase from the text
			t := strings.Fields(w.text(200))
			k := rng.Intn(max(len(t)-3, 1))
			out = append(out, `"`+strings.Join(t[k:min(k+3, len(t))], " ")+`"`)
		}
	}
	return out
}

// BenchmarkRebuild builds the index from scratch over a corpus of
// -rebuild.mb of bottles (200 MB by default; the search corpus with
// -rebuild.mb=1000 -corpus.sessions=5000), and reports the rate in
// megabytes of bottles per second. Its baselines, measured in the same
// run: FTS5 alone inserting the same blocks' text into the same table, on
// one connection (fts5-MB/s) and split over one database per CPU in
// parallel (fts5-parallel-MB/s): what any rebuild through FTS5 in this
// driver could reach at best, with no files read, no bottle parsed and no
// segments merged; and FTS5 alone on one connection with its own
// unicode61 tokenizer instead of bottled's (fts5-unicode61-MB/s), the
// cost of cutting Chinese, Japanese and Korean into bigrams (and of a
// tokenizer in Go).
func BenchmarkRebuild(b *testing.B) {
	sessions := max(*rebuildMB*5, 50) // the same 200 KB average as the search corpus
	if *rebuildMB == *benchMB {
		sessions = *benchSessions
	}
	data, _ := corpus(b, sessions, *rebuildMB)
	size := dirBytes(b, bottles.BottlesDir(data))
	ix, err := Open(context.Background(), data, Options{Location: time.UTC})
	if err != nil {
		b.Fatal(err)
	}
	ix.Close()
	var took time.Duration
	for b.Loop() {
		start := time.Now()
		ix, err := Open(context.Background(), data, Options{Location: time.UTC, Rebuild: true})
		if err != nil {
			b.Fatal(err)
		}
		took += time.Since(start)
		ix.Close()
	}
	rate := func(d time.Duration) float64 { return float64(size) / 1e6 / d.Seconds() }
	b.ReportMetric(rate(took/time.Duration(b.N)), "MB/s")
	b.ReportMetric(float64(size)/1e6, "bottles-MB")
	b.StopTimer()
	blocks := blockTexts(b, bottles.BottlesDir(data))
	b.ReportMetric(rate(fts5Only(b, blocks, 1, textTable)), "fts5-MB/s")
	b.ReportMetric(rate(fts5Only(b, blocks, runtime.GOMAXPROCS(0), textTable)), "fts5-parallel-MB/s")
	unicode61 := strings.Replace(textTable, "tokenize='"+tokenizerName+"'", "tokenize='unicode61 remove_diacritics 2'", 1)
	b.ReportMetric(rate(fts5Only(b, blocks, 1, unicode61)), "fts5-unicode61-MB/s")
}

// blockText is what a rebuild hands FTS5 for one block.
type blockText struct{ body, scope string }

// blockTexts reads every bottle in dir and returns its blocks' text.
func blockTexts(b *testing.B, dir string) []blockText {
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		b.Fatal(err)
	}
	var out []blockText
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		p, err := render.Parse(data, time.UTC)
		if err != nil {
			b.Fatal(err)
		}
		scope := scopeWords(p.Project, p.State.Mode)
		for _, bl := range p.Blocks {
			out = append(out, blockText{string(data[bl.Text:bl.End]), scope})
		}
	}
	return out
}

// fts5Only inserts blocks into text tables as a rebuild does (one
// transaction, the same buffer, no journal), created by table, split over
// shards databases filled in parallel, and returns how long it took.
func fts5Only(b *testing.B, blocks []blockText, shards int, table string) time.Duration {
	dir := b.TempDir()
	start := time.Now()
	var g errgroup.Group
	for s := range shards {
		part := blocks[s*len(blocks)/shards : (s+1)*len(blocks)/shards]
		g.Go(func() error { return fts5Fill(filepath.Join(dir, fmt.Sprint(s, ".db")), part, table) })
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

func fts5Fill(path string, blocks []blockText, table string) error {
	c, err := openConn(path)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Exec(table + `; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;
		INSERT INTO text (text, rank) VALUES ('hashsize', ` + fmt.Sprint(pendingMax) + `);
		INSERT INTO text (text, rank) VALUES ('automerge', 0); BEGIN`); err != nil {
		return err
	}
	st, _, err := c.Prepare(`INSERT INTO text (rowid, body, scope) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	for i, bl := range blocks {
		if err := bind(st, []any{i + 1, bl.body, bl.scope}); err != nil {
			return err
		}
		if err := st.Exec(); err != nil {
			return err
		}
	}
	return c.Exec("COMMIT")
}
