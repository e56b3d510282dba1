package sources

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"testing"
)

// TestLongLineStreamed reads lines longer than longLine: their short
// strings are kept (a prompt typed beside a pasted image), strings longer
// than keepString are replaced by a note, escapes across read boundaries
// are followed, and the offset and checksum are those of the raw bytes,
// whatever the read size.
func TestLongLineStreamed(t *testing.T) {
	if testing.Short() {
		t.Skip("reads lines of tens of megabytes")
	}
	// A user message: its prompt text, then an image of 12 MB.
	image := strings.Repeat(`ab\"c\\d`, (12<<20)/8)
	prompt := userLine("u1", "", "2026-01-01T10:00:00.000Z", "LONG-PROMPT kept \"quoted\" \\ text")
	var rec map[string]any
	if err := json.Unmarshal([]byte(prompt), &rec); err != nil {
		t.Fatal(err)
	}
	rec["message"] = map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "LONG-PROMPT kept \"quoted\" \\ text"},
		map[string]any{"type": "image", "source": map[string]any{"type": "base64", "data": "IMAGE"}},
	}}
	b, _ := json.Marshal(rec)
	line1 := strings.Replace(string(b), `"IMAGE"`, `"`+image+`"`, 1) + "\n"
	// A pasted text of 9 MB in one message: longer than keepString, it is
	// replaced by a note.
	line2 := userLine("u2", "u1", "2026-01-01T10:00:05.000Z", "LONG-PASTE "+strings.Repeat("z", 9<<20))
	line3 := assistantLine("a1", "u2", "2026-01-01T10:00:09.000Z", "m1", "LONG-AFTER the reply")
	data := line1 + line2 + line3
	if len(line1) <= longLine || len(line2) <= longLine {
		t.Fatalf("lines of %d and %d bytes are not long", len(line1), len(line2))
	}
	for _, chunk := range []int{1, 4093, 1 << 20} {
		t.Run(fmt.Sprint(chunk), func(t *testing.T) {
			tr := NewTranscript("s", "")
			if err := tr.readFrom(&chunkReader{r: strings.NewReader(data), n: chunk * 1021}, 0); err != nil {
				t.Fatal(err)
			}
			if tr.offset != int64(len(data)) || tr.malformed != 0 {
				t.Fatalf("offset %d malformed %d, want %d and 0", tr.offset, tr.malformed, len(data))
			}
			if got := tr.sum; got != crc32.ChecksumIEEE([]byte(data)) {
				t.Errorf("checksum %08x is not the raw bytes'", got)
			}
			got := texts(BuildSpine("s", []*Transcript{tr}))
			if len(got) != 3 || !strings.Contains(got[0], "LONG-PROMPT kept \"quoted\" \\ text") ||
				got[1] != "1:[bottled: 9.0 MB of text not kept]" ||
				!strings.Contains(got[2], "LONG-AFTER the reply") {
				t.Errorf("entries = %.200q", got)
			}
		})
	}
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	r io.Reader
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }
