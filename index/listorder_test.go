package index

import (
	"context"
	"strings"
	"testing"

	"github.com/ncruces/go-sqlite3"
)

// TestSessionsOrderedByIndex checks that a list of sessions is read in its
// order from an index rather than sorted whole: sorting 5,000 sessions
// was half of what the list took (BenchmarkList in view). A generation
// made before the index was added gets it when it is opened.
func TestSessionsOrderedByIndex(t *testing.T) {
	for _, c := range []struct {
		name string
		drop bool // the generation was made without the index
	}{{"new", false}, {"older generation", true}} {
		t.Run(c.name, func(t *testing.T) {
			data := t.TempDir()
			writeBottles(t, data, talks[0].Bottle(t, testNow), talks[1].Bottle(t, testNow))
			ix := openIndex(t, data)
			if c.drop {
				path := ix.genPath(ix.gen)
				ix.Close()
				conn, err := sqlite3.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := conn.Exec("DROP INDEX IF EXISTS " + listIndex); err != nil {
					t.Fatal(err)
				}
				conn.Close()
				ix = openIndex(t, data)
			}
			var plan []string
			err := ix.do(context.Background(), func() error {
				return ix.query("EXPLAIN QUERY PLAN "+sessionsSQL, func(s *sqlite3.Stmt) error {
					plan = append(plan, s.ColumnText(3))
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(plan, "; "); strings.Contains(got, "TEMP B-TREE") || !strings.Contains(got, listIndex) {
				t.Errorf("plan of the sessions list: %s; want it read from %s, unsorted", got, listIndex)
			}
		})
	}
}
