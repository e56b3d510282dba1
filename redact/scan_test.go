package redact

import (
	"slices"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/fakecred"
)

// everyPosition is findKeywords without its filter: it tries every
// keyword at every position, skipping only what a found token covers.
func everyPosition(s string) []found {
	var out []found
	for i := 0; i+2 < len(s); i++ {
		out, i = keywords.matchAt(s, i, out)
	}
	return out
}

// FuzzKeywordScan: the filtered scan, with its rolling window and its
// jumps past found tokens, finds what trying every position finds.
func FuzzKeywordScan(f *testing.F) {
	g := fakecred.New(7)
	gh, ant, jwt := g.GitHub('p').Text, g.Anthropic().Text, g.JWT().Text
	for _, s := range []string{
		"",
		"ab",
		"GHP_",
		gh,
		gh + gh,
		gh + " " + ant,
		"x" + gh + "eyJ",
		gh + "?sig=" + ant,
		gh + "://u:" + ant + "@h",
		jwt + gh[:3],
		"curl -b 'session=" + gh + "' https://x",
		"Cookie: sid=" + ant + "; Path=/",
		"https://u:" + gh + "@host/?sig=" + ant + "&sig=x",
		g.Telegram().Text + gh + " " + g.DiscordWebhook().Text + "/" + g.StripeWebhook().Text,
		"7z a -p" + gh + " zip -P " + ant + " x.zip",
		strings.Join(keywords.words, ""),
		strings.Join(keywords.words, " ") + "=" + gh,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := findKeywords(s, nil)
		want := everyPosition(s)
		if !slices.Equal(got, want) {
			t.Fatalf("findKeywords(%q)\n got %v\nwant %v", s, got, want)
		}
	})
}
