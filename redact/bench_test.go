package redact_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/fixtures"
	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// The real corpora, read once per test binary: every string of every
// transcript, and the bottle rendered from each.
var (
	realOnce    sync.Once
	realStrs    []string
	realBytes   int64
	realBottles []string
	bottleBytes int64
	transcripts []string
)

func loadReal(b *testing.B) {
	b.Helper()
	files := fixtures.All(b)
	realOnce.Do(func() {
		transcripts = files
		for _, path := range files {
			eachString(b, path, func(s string) {
				realStrs = append(realStrs, s)
				realBytes += int64(len(s))
			})
			if bt := renderFile(b, path); bt != "" {
				realBottles = append(realBottles, bt)
				bottleBytes += int64(len(bt))
			}
		}
	})
}

// renderFile renders a transcript's bottle as the daemon would, "" for a
// transcript with nothing to render (a subagent's).
func renderFile(b *testing.B, path string) string {
	tr, err := sources.ReadTranscript("s", path)
	if err != nil {
		b.Fatal(err)
	}
	bt, err := render.Render(render.Input{SessionID: "s", Spine: sources.BuildSpine("s", []*sources.Transcript{tr}), Now: time.Unix(0, 0)})
	if errors.Is(err, render.ErrNothing) {
		return ""
	}
	if err != nil {
		b.Fatal(err)
	}
	return string(bt.Bytes)
}

// BenchmarkRedact measures redaction over real and made-up text. Compare
// "bottles" with BenchmarkRenderReal, which renders the same bottles: the
// daemon would redact about a bottle's text for each render.
func BenchmarkRedact(b *testing.B) {
	rules := redact.Builtin()
	b.Run("real-strings", func(b *testing.B) {
		loadReal(b)
		redactEach(b, rules, realStrs, realBytes)
	})
	b.Run("bottles", func(b *testing.B) {
		loadReal(b)
		redactEach(b, rules, realBottles, bottleBytes)
		b.ReportMetric(float64(bottleBytes)/float64(realBytes)*100, "%of-strings")
	})
	for _, tt := range []struct{ name, text string }{
		{"no-candidate", strings.Repeat("Refactor the payment retry loop so it backs off with jitter, then run the suite. ", 1<<14)},
		{"keywords-no-secret", strings.Repeat("The key point: a token passes the author's secret check; see https://example.com/x. ", 1<<14)},
		{"secrets", strings.Repeat("export GITHUB_TOKEN=ghp_"+strings.Repeat("aB3dE6", 6)+" and password: "+strings.Repeat("x9Y", 4)+"\n", 1<<13)},
		{"adversarial-key", strings.Repeat("key=", 1<<18)},
		{"adversarial-sk", strings.Repeat("sk-", 1<<18)},
		{"key-blocks", strings.Repeat("> -----BEGIN RSA PRIVATE KEY-----\n> "+strings.Repeat("MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgwMbRvI0MBZhpF", 25)+"\n> -----END RSA PRIVATE KEY-----\nand then\n", 1<<9)},
		{"long-key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n" + strings.Repeat("lQdGBF4Kx8sBEADNiL5Kq8jgLMzP3Y9mFz1kqT+2rLx/0ZQq3vW2hQ8k5xJmT7cR\n", 1<<14) + "-----END PGP PRIVATE KEY BLOCK-----"},
		{"adversarial-begin", strings.Repeat("-----BEGIN RSA PRIVATE KEY-----\n"+strings.Repeat("QUFB", 8)+"\n", 1<<14)},
		{"adversarial-end", strings.Repeat(strings.Repeat("QUFB", 8)+"\n-----END RSA PRIVATE KEY-----\n", 1<<14)},
		{"adversarial-dashes", strings.Repeat("-----", 1<<18)},
		{"long-jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + strings.Repeat("eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ", 1<<14) + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"},
		{"adversarial-jwt", strings.Repeat("eyJhbGciOiJIUzI1NiJ9.", 1<<16)},
		// An unquoted value runs to whitespace: keys inside one must not
		// each read it again, nor URLs each the rest of the line.
		{"adversarial-value", strings.Repeat("(password=x%", 1<<16)},
		{"adversarial-url", strings.Repeat("a://b:c(", 1<<17)},
		{"adversarial-tool", strings.Repeat("mysql -pa sshpass -pa ", 1<<16)},
		// A command's first word and a prompt's line are read within bounds.
		{"adversarial-command", strings.Repeat("ssh-keygen;", 1<<15) + strings.Repeat("zip -P\n", 1<<15)},
		{"adversarial-prompt", strings.Repeat("x/x# zip % ", 1<<15)},
		// Each escaped word is decoded once, and the rest is not copied.
		{"adversarial-escapes", strings.Repeat(`a\_b `, 1<<17)},
		{"adversarial-escaped-word", strings.Repeat(`a\_b&#95;`, 1<<16)},
		{"adversarial-cookies", "Cookie: " + strings.Repeat("a=b; ", 1<<16)},
	} {
		b.Run(tt.name, func(b *testing.B) { redactEach(b, rules, []string{tt.text}, int64(len(tt.text))) })
	}
}

// redactEach times redacting each of texts, n bytes in all.
func redactEach(b *testing.B, rules *redact.Rules, texts []string, n int64) {
	b.SetBytes(n)
	for b.Loop() {
		for _, s := range texts {
			rules.Redact(s)
		}
	}
}

// BenchmarkRenderReal is the baseline for BenchmarkRedact/bottles:
// reading and rendering every real transcript.
func BenchmarkRenderReal(b *testing.B) {
	loadReal(b)
	b.SetBytes(bottleBytes)
	for b.Loop() {
		for _, path := range transcripts {
			renderFile(b, path)
		}
	}
}
