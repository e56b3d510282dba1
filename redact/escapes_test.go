package redact_test

import (
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/fakecred"
)

// TestEscapedTokens: a token whose punctuation is escaped for markdown
// (ghp\_…) or written as an HTML character reference (ghp&#95;…), which
// the web view decodes and the model reads through, is redacted escapes
// and all; escapes around and beside it stay.
func TestEscapedTokens(t *testing.T) {
	f := fakecred.New(34)
	gh := f.GitHub('p').Text
	ant := f.Anthropic().Text
	jwt := f.JWT().Text
	slack := f.SlackWebhook()
	md := strings.NewReplacer("_", `\_`, "-", `\-`, ".", `\.`).Replace
	G, A := R("GitHub token"), R("Anthropic API key")
	runContextCases(t, []contextCase{
		{"markdown underscore", "push with " + md(gh) + " now", "push with " + G + " now"},
		{"decimal reference", "push with ghp&#95;" + gh[4:], "push with " + G},
		{"hex reference", "ghp&#x5F;" + gh[4:] + ".", G + "."},
		{"named reference", "ghp&lowbar;" + gh[4:], G},
		{"letter as a reference", "&#103;hp_" + gh[4:], G},
		{"prefix escaped", `sk\-ant-` + ant[len("sk-ant-"):], A},
		{"escaped throughout", md(ant), A},
		{"JWT", "token " + md(jwt) + " ok", "token " + R("JWT") + " ok"},
		{"Slack webhook", strings.ReplaceAll(slack.Text, "/", `\/`),
			`https:\/\/hooks.slack.com\/services\/` + R("Slack webhook")},
		{"escapes beside", `a\_b ` + md(gh) + ` c\-d`, `a\_b ` + G + ` c\-d`},
		{"escaped backslash before", `C:\\` + gh, `C:\\` + G},
	})
	keptAsIs(t,
		`snake\_case\_name and file\-name\.go`,
		`ghp\_short`,
		`regexp ^sk\-[a-z]+\.go$`,
		"&#95;&#95;init&#95;&#95;.py &lowbar; &amp; &#x2d;",
		`ghp\\_`+gh[4:10],
	)
}
