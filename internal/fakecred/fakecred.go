// Package fakecred makes credential-shaped strings for tests: one of every
// kind bottled redacts, and look-alikes that must survive redaction.
package fakecred

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

// Credential-shaped strings are made at test time from parts and random
// characters, never written out whole: the repository holds no string a
// secret scanner (GitHub's push protection among them) would take for a
// live credential.

// Alphabets for Gen.Str.
const (
	Upper   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	Lower   = "abcdefghijklmnopqrstuvwxyz"
	Digits  = "0123456789"
	Alnum   = Upper + Lower + Digits
	B64     = Alnum + "+/"
	B64URL  = Alnum + "-_"
	Hex     = "0123456789abcdef"
	Base32U = Upper + "234567"
)

// Gen makes credential-shaped strings from a seeded generator, so a
// failing case can be made again.
type Gen struct{ r *rand.Rand }

// New returns a generator seeded with seed.
func New(seed uint64) *Gen { return &Gen{rand.New(rand.NewPCG(seed, seed^0x5eed))} }

// Str is n random characters of set; where set has digits and letters,
// at least one of each, as every real token of such an alphabet has.
func (f *Gen) Str(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[f.r.IntN(len(set))]
	}
	ds, ls := only(set, Digits), only(set, Lower+Upper)
	if n >= 2 && ds != "" && ls != "" {
		b[f.r.IntN(n/2)] = ds[f.r.IntN(len(ds))]
		b[n/2+f.r.IntN(n-n/2)] = ls[f.r.IntN(len(ls))]
	}
	return string(b)
}

// only is the bytes of set that are in of.
func only(set, of string) string {
	var b strings.Builder
	for i := 0; i < len(set); i++ {
		if strings.IndexByte(of, set[i]) >= 0 {
			b.WriteByte(set[i])
		}
	}
	return b.String()
}

// A Credential is a generated credential, Text as it would be pasted,
// Secret the part that must never survive redaction, and Want what
// redacting Text alone gives.
type Credential struct {
	Kind   string
	Text   string
	Secret string
	Want   string
}

func token(kind, s string) Credential {
	return Credential{Kind: kind, Text: s, Secret: s, Want: "[redacted: " + kind + "]"}
}

// keyed is a credential given in a context that is kept around it.
func keyed(kind, before, secret, after string) Credential {
	return Credential{Kind: kind, Text: before + secret + after, Secret: secret,
		Want: before + "[redacted: " + kind + "]" + after}
}

// Anthropic makes a credential of its kind.
func (f *Gen) Anthropic() Credential {
	return token("Anthropic API key", "sk-"+"ant-"+"api03-"+f.Str(B64URL, 93)+"AA")
}

// AnthropicOAuth makes a credential of its kind.
func (f *Gen) AnthropicOAuth() Credential {
	return token("Anthropic API key", "sk-"+"ant-"+"oat01-"+f.Str(B64URL, 95))
}

// OpenAIProject makes a credential of its kind.
func (f *Gen) OpenAIProject() Credential {
	return token("OpenAI API key", "sk-"+"proj-"+f.Str(B64URL, 74)+"T3Blbk"+"FJ"+f.Str(B64URL, 74))
}

// OpenAILegacy makes a credential of its kind.
func (f *Gen) OpenAILegacy() Credential {
	return token("OpenAI API key", "sk-"+f.Str(Alnum, 20)+"T3Blbk"+"FJ"+f.Str(Alnum, 20))
}

// OpenAIStyle is the sk- key of an OpenAI-compatible provider.
func (f *Gen) OpenAIStyle() Credential { return token("OpenAI API key", "sk-"+f.Str(Hex, 32)) }

// GitHub makes a credential of its kind.
func (f *Gen) GitHub(c byte) Credential {
	return token("GitHub token", "gh"+string(c)+"_"+f.Str(Alnum, 36))
}

// GitHubFineGrained makes a credential of its kind.
func (f *Gen) GitHubFineGrained() Credential {
	return token("GitHub token", "github"+"_pat_"+f.Str(Alnum, 22)+"_"+f.Str(Alnum, 59))
}

// GitLab makes a credential of its kind.
func (f *Gen) GitLab(prefix string) Credential {
	if prefix == "glptt" { // a pipeline trigger token is 40 hex Digits
		return token("GitLab token", prefix+"-"+f.Str(Hex, 40))
	}
	return token("GitLab token", prefix+"-"+f.Str(Alnum+"_-", 20))
}

// AWSKeyID makes a credential of its kind.
func (f *Gen) AWSKeyID(prefix string) Credential {
	return token("AWS access key ID", prefix+f.Str(Base32U, 16))
}

// AWSSecret makes a credential of its kind.
func (f *Gen) AWSSecret() Credential {
	return keyed("AWS secret access key", "aws_secret_access_key = ", f.Str(B64, 40), "")
}

// Google makes a credential of its kind.
func (f *Gen) Google() Credential { return token("Google API key", "AI"+"za"+f.Str(B64URL, 35)) }

// SlackBot makes a credential of its kind.
func (f *Gen) SlackBot() Credential {
	return token("Slack token", "xo"+"xb-"+f.Str(Digits, 12)+"-"+f.Str(Digits, 13)+"-"+f.Str(Alnum, 24))
}

// SlackUser makes a credential of its kind.
func (f *Gen) SlackUser() Credential {
	return token("Slack token", "xo"+"xp-"+f.Str(Digits, 12)+"-"+f.Str(Digits, 12)+"-"+f.Str(Digits, 12)+"-"+f.Str(Hex, 32))
}

// SlackWebhook makes a credential of its kind.
func (f *Gen) SlackWebhook() Credential {
	return keyed("Slack webhook", "https://hooks.slack.com/services/",
		"T"+f.Str(Upper+Digits, 8)+"/B"+f.Str(Upper+Digits, 10)+"/"+f.Str(Alnum, 24), "")
}

// Stripe makes a credential of its kind.
func (f *Gen) Stripe(prefix string) Credential {
	return token("Stripe key", prefix+f.Str(Alnum, 24))
}

// NPM makes a credential of its kind.
func (f *Gen) NPM() Credential { return token("npm token", "np"+"m_"+f.Str(Alnum, 36)) }

// PyPI makes a credential of its kind.
func (f *Gen) PyPI() Credential {
	return token("PyPI token", "pypi-"+"AgEIcHlwaS5vcmc"+f.Str(B64URL, 70))
}

// HuggingFace makes a credential of its kind.
func (f *Gen) HuggingFace() Credential {
	return token("Hugging Face token", "hf"+"_"+f.Str(Upper+Lower, 34))
}

// PrivateKey is a PEM private key block of lines lines of base64.
func (f *Gen) PrivateKey(label string, lines int) Credential {
	var b strings.Builder
	b.WriteString("-----BEGIN " + label + "PRIVATE KEY-----\n")
	for range lines {
		b.WriteString(f.Str(B64, 64) + "\n")
	}
	b.WriteString(f.Str(B64, 24) + "==\n")
	b.WriteString("-----END " + label + "PRIVATE KEY-----")
	return token("private key", b.String())
}

// JWT makes a credential of its kind.
func (f *Gen) JWT() Credential {
	enc := base64.RawURLEncoding.EncodeToString
	header := enc([]byte(`{"alg":"HS256","typ":"JWT"}`))
	payload := enc([]byte(`{"sub":"` + f.Str(Digits, 10) + `","name":"` + f.Str(Lower, 8) + `","iat":` + f.Str(Digits, 10) + `}`))
	return token("JWT", header+"."+payload+"."+f.Str(B64URL, 43))
}

// URLPassword makes a credential of its kind.
func (f *Gen) URLPassword() Credential {
	return keyed("password", "postgres://app:", f.Str(Alnum, 16), "@db.internal:5432/prod")
}

// Bearer makes a credential of its kind.
func (f *Gen) Bearer() Credential {
	return keyed("bearer token", "Authorization: Bearer ", f.Str(B64URL, 40), "")
}

// Generic makes a credential of its kind.
func (f *Gen) Generic() Credential {
	return keyed("secret", "SERVICE_SECRET=", f.Str(Alnum, 32), "")
}

// Password makes a credential of its kind.
func (f *Gen) Password() Credential {
	return keyed("password", "password: ", f.Str(Alnum, 10)+"!", "")
}

// JSONToken is a high-entropy value under a JSON key that names a token.
func (f *Gen) JSONToken() Credential {
	return keyed("secret", `{"token": "`, f.Str(Alnum, 32), `"}`)
}

// Cookie is a session cookie in a Cookie header.
func (f *Gen) Cookie() Credential {
	return keyed("cookie", "Cookie: sessionid=", f.Str(Alnum, 32), "; theme=dark")
}

// Keytool is a keystore's password on keytool's command line.
func (f *Gen) Keytool() Credential {
	return keyed("password", "keytool -list -keystore app.jks -storepass ", f.Str(Alnum, 10)+"!", " -v")
}

// SAS is the signature of an Azure shared access signature URL.
func (f *Gen) SAS() Credential {
	return keyed("Azure SAS signature", "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&sig=",
		f.Str(Alnum, 20)+"%2B"+f.Str(Alnum, 20)+"%2F"+f.Str(Alnum, 1)+"%3D", "")
}

// PresignedS3 is the signature of an S3 URL presigned with SigV4.
func (f *Gen) PresignedS3() Credential {
	return keyed("AWS signature", "https://b.s3.amazonaws.com/k.txt?X-Amz-Date=20240101T000000Z&X-Amz-Expires=3600&X-Amz-Signature=",
		f.Str(Hex, 64), "")
}

// SignedURL is the signature of an S3 URL signed the version 2 way.
func (f *Gen) SignedURL() Credential {
	return keyed("URL signature", "https://b.s3.amazonaws.com/k.txt?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=1700000000&Signature=",
		f.Str(Alnum, 12)+"%2B"+f.Str(Alnum, 12)+"%2F"+f.Str(Alnum, 3)+"%3D", "")
}

// OpenSSLKey is a raw key on openssl enc's command line.
func (f *Gen) OpenSSLKey() Credential {
	return keyed("encryption key", "openssl enc -aes-256-cbc -K ", f.Str(Hex, 64), " -iv 000102030405060708090a0b0c0d0e0f -in a")
}

// OpenSSLHMAC is an HMAC's key on openssl dgst's command line.
func (f *Gen) OpenSSLHMAC() Credential {
	return keyed("HMAC key", "openssl dgst -sha256 -hmac ", f.Str(Alnum, 24), " body.json")
}

// StripeWebhook is a Stripe webhook endpoint's signing secret.
func (f *Gen) StripeWebhook() Credential {
	return token("Stripe webhook secret", "wh"+"sec_"+f.Str(Alnum, 32))
}

// DiscordWebhook is a Discord webhook URL, whose token is the secret and
// whose id is not.
func (f *Gen) DiscordWebhook() Credential {
	return keyed("Discord webhook", "https://discord.com/api/webhooks/"+f.Str(Digits, 19)+"/", f.Str(B64URL, 68), "")
}

// Telegram is a Telegram bot's token: the bot's id, a colon and its
// secret.
func (f *Gen) Telegram() Credential {
	return token("Telegram bot token", f.Str("123456789", 1)+f.Str(Digits, 9)+":A"+"A"+f.Str(B64URL, 33))
}

// EscapedGitHub is a GitHub token with its underscore escaped for
// markdown, as a markdown renderer shows it live.
func (f *Gen) EscapedGitHub() Credential {
	c := f.GitHub('p')
	c.Text = strings.Replace(c.Text, "_", `\_`, 1)
	c.Secret = c.Text
	return c
}

// Lookalikes are strings that resemble credentials and are none: git
// SHAs, a UUID, a sha256 sum, base64 of ordinary text, words like
// sk-learn, URLs without a password. Redaction must leave them as they
// are.
func (f *Gen) Lookalikes() []string {
	sha := f.Str(Hex, 40)
	uuid := f.Str(Hex, 8) + "-" + f.Str(Hex, 4) + "-4" + f.Str(Hex, 3) + "-a" + f.Str(Hex, 3) + "-" + f.Str(Hex, 12)
	return []string{
		"commit " + sha,
		"git checkout " + sha[:12],
		"session " + uuid + " resumed",
		f.Str(Hex, 64) + "  bottled-linux-amd64.tar.gz",
		"echo SGVsbG8sIHdvcmxkISBUaGlzIGlzIG9yZGluYXJ5IHRleHQu | base64 -d",
		"pip install scikit-learn (the sk-learn package)",
		"https://github.com/bottled-dev/bottled/pull/17?tab=files",
		"https://user@example.com/path",
	}
}

// Every returns one credential of each kind the tests know, and of each
// prefix of the kinds that have several.
func (f *Gen) Every() []Credential {
	out := []Credential{f.Anthropic(), f.AnthropicOAuth(), f.OpenAIProject(), f.OpenAILegacy(), f.OpenAIStyle()}
	for _, c := range []byte("pousr") {
		out = append(out, f.GitHub(c))
	}
	out = append(out, f.GitHubFineGrained())
	for _, p := range []string{"glpat", "gldt", "glrt", "glptt", "glft", "glsoat"} {
		out = append(out, f.GitLab(p))
	}
	for _, p := range []string{"AKIA", "ASIA"} {
		out = append(out, f.AWSKeyID(p))
	}
	out = append(out, f.AWSSecret(), f.Google(), f.SlackBot(), f.SlackUser(), f.SlackWebhook())
	for _, p := range []string{"sk_" + "live_", "rk_" + "live_", "sk_" + "test_", "rk_" + "test_"} {
		out = append(out, f.Stripe(p))
	}
	out = append(out, f.NPM(), f.PyPI(), f.HuggingFace(), f.PrivateKey("RSA ", 4), f.PrivateKey("", 3),
		f.PrivateKey("OPENSSH ", 5), f.JWT(), f.URLPassword(), f.Bearer(), f.Generic(), f.Password(), f.JSONToken(),
		f.Cookie(), f.Keytool(), f.SAS(), f.EscapedGitHub(), f.PresignedS3(), f.SignedURL(), f.OpenSSLKey(), f.OpenSSLHMAC(),
		f.StripeWebhook(), f.DiscordWebhook(), f.Telegram())
	return out
}
