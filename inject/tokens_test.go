package inject

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/bottled-dev/bottled/internal/fixtures"
	"github.com/bottled-dev/bottled/internal/standin"
)

// TestLineTokensIsConservative: for any line, the estimate is at least
// what the stand-in API's tokenizer approximation counts for it as the
// Read tool returns it (numbered, with its line break). The end-to-end
// tests read bottles through the real Read tool against that count.
func TestLineTokensIsConservative(t *testing.T) {
	check := func(line []byte) {
		t.Helper()
		shown := fmt.Sprintf("%6d\t%s\n", 123456, line)
		if est, counted := lineTokens(line), standin.Tokens(shown); est < counted {
			t.Fatalf("estimate %d < counted %d for %q", est, counted, line)
		}
	}
	alphabet := []rune("aZ09 .,;:{}[]\"'\\/\t-_=+*&^%$#@!~`<>?|()日本語ЖЯé🙂🚀\u200d")
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		r := make([]rune, rng.IntN(80))
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		check([]byte(string(r)))
	}
	// Real transcripts: raw JSON lines are about as dense as text gets.
	files, _ := filepath.Glob(filepath.Join(fixtures.Real(t), "*.jsonl"))
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			check(sc.Bytes())
		}
		f.Close()
	}
}
