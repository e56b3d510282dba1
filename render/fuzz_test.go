package render

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bottled/sources"
)

// FuzzRenderPrivate reads arbitrary transcript bytes followed by a user
// message and an assistant message, each hiding a secret in a <private>
// element among fuzzed text, and renders them: the secret must never reach
// the bottle, whatever surrounds it.
func FuzzRenderPrivate(f *testing.F) {
	f.Add([]byte(""), "before ", " middle <system-reminder>", "</system-reminder> after")
	f.Add([]byte(`{"type":"user","uuid":"x","message":{"content":"<private>"}}`+"\n"), "<private", "<private>", "")
	f.Add([]byte("{\"type\":\"assistant\",\n"), "<command-name>/x</command-name><command-args>", "", "</command-args>")
	const secret = "S3CR3T-Z9"
	f.Fuzz(func(t *testing.T, junk []byte, before, inside, after string) {
		inside = strings.ReplaceAll(inside, "</private>", "")
		for _, p := range []*string{&before, &inside, &after} {
			*p = strings.ReplaceAll(*p, secret, "")
		}
		text := before + "<private>" + inside + secret + "</private>" + after
		user, _ := json.Marshal(map[string]any{"type": "user", "uuid": "fz-u", "message": map[string]any{"role": "user", "content": text}})
		asst, _ := json.Marshal(map[string]any{"type": "assistant", "uuid": "fz-a", "parentUuid": "fz-u",
			"message": map[string]any{"id": "fz-m", "role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}})
		data := append(append(append(append([]byte{}, junk...), '\n'), user...), '\n')
		data = append(append(data, asst...), '\n')
		path := filepath.Join(t.TempDir(), "s.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		tr, err := sources.ReadTranscript("s", path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Render(Input{SessionID: "s", Spine: sources.BuildSpine("s", []*sources.Transcript{tr}), Now: goldenNow})
		if errors.Is(err, ErrNothing) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b.Bytes), secret) {
			t.Fatalf("secret leaked from %q", text)
		}
	})
}
