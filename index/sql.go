package index

import (
	"context"
	"fmt"

	"github.com/ncruces/go-sqlite3"
)

// stmt returns a prepared statement for sql on the current connection,
// prepared once per connection. Called with mu held.
func (ix *Index) stmt(sql string) (*sqlite3.Stmt, error) {
	if st := ix.stmts[sql]; st != nil {
		return st, nil
	}
	st, _, err := ix.conn.Prepare(sql)
	if err != nil {
		return nil, fmt.Errorf("index: prepare: %w", err)
	}
	if ix.stmts == nil {
		ix.stmts = map[string]*sqlite3.Stmt{}
	}
	ix.stmts[sql] = st
	return st, nil
}

// bind binds args to st's parameters in order.
func bind(st *sqlite3.Stmt, args []any) error {
	for i, a := range args {
		var err error
		switch v := a.(type) {
		case int:
			err = st.BindInt64(i+1, int64(v))
		case int64:
			err = st.BindInt64(i+1, v)
		case uint64:
			err = st.BindInt64(i+1, int64(v))
		case bool:
			err = st.BindBool(i+1, v)
		case string:
			err = st.BindText(i+1, v)
		case []byte:
			err = st.BindRawText(i+1, v)
		case float64:
			err = st.BindFloat(i+1, v)
		default:
			err = fmt.Errorf("index: cannot bind %T", a)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// exec runs a statement that returns no rows.
func (ix *Index) exec(sql string, args ...any) error {
	st, err := ix.stmt(sql)
	if err != nil {
		return err
	}
	if err := bind(st, args); err != nil {
		st.ClearBindings()
		return err
	}
	err = st.Exec()
	st.ClearBindings()
	return err
}

// query runs a statement and calls row for each result row.
func (ix *Index) query(sql string, row func(*sqlite3.Stmt) error, args ...any) error {
	st, err := ix.stmt(sql)
	if err != nil {
		return err
	}
	defer func() {
		st.Reset()
		st.ClearBindings()
	}()
	if err := bind(st, args); err != nil {
		return err
	}
	for st.Step() {
		if err := row(st); err != nil {
			return err
		}
	}
	return st.Err()
}

// tx runs fn in a write transaction (begin). Once the transaction has
// begun, fn and the commit run to the end whatever ctx says (fn checks it
// between steps where it can stop): an interrupted statement would leave
// the transaction to a ROLLBACK that the same interrupt refuses.
func (ix *Index) tx(ctx context.Context, fn func() error) (err error) {
	if err := ix.begin(ctx); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			ix.conn.Exec("ROLLBACK")
		}
	}()
	if err := fn(); err != nil {
		return err
	}
	return ix.conn.Exec("COMMIT")
}

// begin starts a write transaction, waiting for another process's write
// to the index (SQLite's busy timeout, busyTimeout) only until ctx ends:
// the transaction then does not start, and the error is ctx's.
func (ix *Index) begin(ctx context.Context) error {
	old := ix.conn.SetInterrupt(ctx)
	err := ix.conn.Exec("BEGIN IMMEDIATE")
	ix.conn.SetInterrupt(old)
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("wait for the search index's write lock: %w", context.Cause(ctx))
	}
	return err
}

// closeStmts finalises the cached statements (before the connection
// closes).
func (ix *Index) closeStmts() {
	for _, st := range ix.stmts {
		st.Close()
	}
	ix.stmts = nil
}
