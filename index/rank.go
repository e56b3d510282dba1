package index

import (
	"errors"
	"math"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/ext/fts5"
)

// Search ranks with BM25, but not with FTS5's bm25(): that function weighs
// each phrase by how many rows hold it, which for a phrase means running
// the phrase over the whole index once per query (hundreds of
// milliseconds for a phrase of common words over a large index), and so
// would an fts5vocab table for a common word. bottled's rank takes the
// counts as arguments, estimated cheaply (see phraseDocs), and is
// otherwise BM25 as FTS5 computes it.

// BM25's parameters, FTS5's defaults.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// rankFunc is the name of the rank function registered on each connection:
// rankFunc(text, words, docs₀, docs₁, …), with the number of words in the
// row's body and the number of rows holding each phrase of the query (or
// an upper bound), in order, returns the row's score, higher is better.
// (The row's length is passed in: FTS5's xColumnSize panics in the
// driver's build of FTS5 when called from an auxiliary function.)
const rankFunc = "bottled_rank"

// registerFTS registers FTS5, the tokenizer and the rank function on a
// connection.
func registerFTS(c *sqlite3.Conn) error {
	return fts5.RegisterCustom(c, func(api *fts5.API) error {
		if err := api.CreateTokenizer(tokenizerName, newTokenizer); err != nil {
			return err
		}
		return api.CreateFunction(rankFunc, rank)
	})
}

// rankStats is what rank keeps between the rows of one query.
type rankStats struct{ rows, avglen float64 }

func rank(f fts5.Context, ctx sqlite3.Context, args ...sqlite3.Value) {
	st, _ := f.GetAuxdata(false).(*rankStats)
	if st == nil {
		rows, err := f.RowCount()
		if err != nil {
			ctx.ResultError(err)
			return
		}
		total, err := f.ColumnTotalSize(0)
		if err != nil {
			ctx.ResultError(err)
			return
		}
		st = &rankStats{rows: float64(rows), avglen: float64(total) / math.Max(float64(rows), 1)}
		f.SetAuxdata(st)
	}
	n, err := f.InstCount()
	if err != nil {
		ctx.ResultError(err)
		return
	}
	tf := make([]float64, f.PhraseCount())
	for i := range n {
		phrase, col, _, err := f.Inst(i)
		if err != nil {
			ctx.ResultError(err)
			return
		}
		if col == 0 && phrase < len(tf) {
			tf[phrase]++
		}
	}
	if len(args) == 0 {
		ctx.ResultError(errors.New(rankFunc + ": no row length"))
		return
	}
	norm := bm25K1 * (1 - bm25B + bm25B*args[0].Float()/math.Max(st.avglen, 1))
	args = args[1:]
	score := 0.0
	for p, t := range tf {
		if t == 0 || p >= len(args) {
			continue
		}
		w := 1.0 // a lone phrase: its weight changes no order
		if d := args[p].Float(); d > 0 {
			w = idf(st.rows, d)
		}
		score += w * t * (bm25K1 + 1) / (t + norm)
	}
	ctx.ResultFloat(score)
}

// idf is BM25's weight of a phrase found in docs of rows rows (FTS5's
// formula, floored as FTS5 floors it).
func idf(rows, docs float64) float64 {
	return math.Max(math.Log((rows-docs+0.5)/(docs+0.5)), 1e-6)
}
