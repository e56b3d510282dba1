package index

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/bottles"
)

// BenchmarkPutAppend indexes a bottle of a long session that grows by one
// turn per iteration, as the daemon does after each render: only the new
// turn's blocks are tokenized.
func BenchmarkPutAppend(b *testing.B) {
	data := b.TempDir()
	s := talk{ID: "bench", CWD: "/p", Start: day}
	for i := range 3000 {
		s.Turns = append(s.Turns, [2]string{fmt.Sprintf("prompt %d %s", i, strings.Repeat("words of the user ", 20)),
			fmt.Sprintf("answer %d %s", i, strings.Repeat("and the assistant answers at length ", 40))})
	}
	bt := s.Bottle(b, testNow)
	writeBottles(b, data, bt)
	ix := openIndex(b, data)
	dir := bottles.BottlesDir(data)
	n := 0
	for b.Loop() {
		b.StopTimer()
		n++
		s.Turns = append(s.Turns, [2]string{fmt.Sprintf("new prompt %d", n), "new answer"})
		bt := s.Bottle(b, testNow)
		if err := replaceFile(bottles.BottlePath(dir, s.ID), bt.Bytes); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := ix.Put(context.Background(), s.ID+".md", bt.Bytes); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(bt.Bytes))/1e6, "bottle-MB")
}
