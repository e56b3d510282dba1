package redact_test

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

// Credential-shaped strings are made at test time from parts and random
// characters, never written out whole: the repository holds no string a
// secret scanner (GitHub's push protection among them) would take for a
// live credential.

const (
	upper   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower   = "abcdefghijklmnopqrstuvwxyz"
	digits  = "0123456789"
	alnum   = upper + lower + digits
	b64     = alnum + "+/"
	b64url  = alnum + "-_"
	hexa    = "0123456789abcdef"
	base32U = upper + "234567"
)

// fakes makes credential-shaped strings from a seeded generator, so a
// failing case can be made again.
type fakes struct{ r *rand.Rand }

func newFakes(seed uint64) *fakes { return &fakes{rand.New(rand.NewPCG(seed, seed^0x5eed))} }

// str is n random characters of set; where set has digits and letters,
// at least one of each, as every real token of such an alphabet has.
func (f *fakes) str(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[f.r.IntN(len(set))]
	}
	ds, ls := only(set, digits), only(set, lower+upper)
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

// A credential is a generated credential, Text as it would be pasted,
// Secret the part that must never survive redaction, and Want what
// redacting Text alone gives.
type credential struct {
	Kind   string
	Text   string
	Secret string
	Want   string
}

func token(kind, s string) credential {
	return credential{Kind: kind, Text: s, Secret: s, Want: "[redacted: " + kind + "]"}
}

// keyed is a credential given in a context that is kept around it.
func keyed(kind, before, secret, after string) credential {
	return credential{Kind: kind, Text: before + secret + after, Secret: secret,
		Want: before + "[redacted: " + kind + "]" + after}
}

func (f *fakes) anthropic() credential {
	return token("Anthropic API key", "sk-"+"ant-"+"api03-"+f.str(b64url, 93)+"AA")
}

func (f *fakes) anthropicOAuth() credential {
	return token("Anthropic API key", "sk-"+"ant-"+"oat01-"+f.str(b64url, 95))
}

func (f *fakes) openAIProject() credential {
	return token("OpenAI API key", "sk-"+"proj-"+f.str(b64url, 74)+"T3Blbk"+"FJ"+f.str(b64url, 74))
}

func (f *fakes) openAILegacy() credential {
	return token("OpenAI API key", "sk-"+f.str(alnum, 20)+"T3Blbk"+"FJ"+f.str(alnum, 20))
}

// openAIStyle is the sk- key of an OpenAI-compatible provider.
func (f *fakes) openAIStyle() credential { return token("OpenAI API key", "sk-"+f.str(hexa, 32)) }

func (f *fakes) github(c byte) credential {
	return token("GitHub token", "gh"+string(c)+"_"+f.str(alnum, 36))
}

func (f *fakes) githubFineGrained() credential {
	return token("GitHub token", "github"+"_pat_"+f.str(alnum, 22)+"_"+f.str(alnum, 59))
}

func (f *fakes) gitlab(prefix string) credential {
	if prefix == "glptt" { // a pipeline trigger token is 40 hex digits
		return token("GitLab token", prefix+"-"+f.str(hexa, 40))
	}
	return token("GitLab token", prefix+"-"+f.str(alnum+"_-", 20))
}

func (f *fakes) awsKeyID(prefix string) credential {
	return token("AWS access key ID", prefix+f.str(base32U, 16))
}

func (f *fakes) awsSecret() credential {
	return keyed("AWS secret access key", "aws_secret_access_key = ", f.str(b64, 40), "")
}

func (f *fakes) google() credential { return token("Google API key", "AI"+"za"+f.str(b64url, 35)) }

func (f *fakes) slackBot() credential {
	return token("Slack token", "xo"+"xb-"+f.str(digits, 12)+"-"+f.str(digits, 13)+"-"+f.str(alnum, 24))
}

func (f *fakes) slackUser() credential {
	return token("Slack token", "xo"+"xp-"+f.str(digits, 12)+"-"+f.str(digits, 12)+"-"+f.str(digits, 12)+"-"+f.str(hexa, 32))
}

func (f *fakes) slackWebhook() credential {
	return keyed("Slack webhook", "https://hooks.slack.com/services/",
		"T"+f.str(upper+digits, 8)+"/B"+f.str(upper+digits, 10)+"/"+f.str(alnum, 24), "")
}

func (f *fakes) stripe(prefix string) credential {
	return token("Stripe key", prefix+f.str(alnum, 24))
}

func (f *fakes) npm() credential { return token("npm token", "np"+"m_"+f.str(alnum, 36)) }

func (f *fakes) pypi() credential {
	return token("PyPI token", "pypi-"+"AgEIcHlwaS5vcmc"+f.str(b64url, 70))
}

func (f *fakes) huggingFace() credential {
	return token("Hugging Face token", "hf"+"_"+f.str(upper+lower, 34))
}

// privateKey is a PEM private key block of lines lines of base64.
func (f *fakes) privateKey(label string, lines int) credential {
	var b strings.Builder
	b.WriteString("-----BEGIN " + label + "PRIVATE KEY-----\n")
	for range lines {
		b.WriteString(f.str(b64, 64) + "\n")
	}
	b.WriteString(f.str(b64, 24) + "==\n")
	b.WriteString("-----END " + label + "PRIVATE KEY-----")
	return token("private key", b.String())
}

func (f *fakes) jwt() credential {
	enc := base64.RawURLEncoding.EncodeToString
	header := enc([]byte(`{"alg":"HS256","typ":"JWT"}`))
	payload := enc([]byte(`{"sub":"` + f.str(digits, 10) + `","name":"` + f.str(lower, 8) + `","iat":` + f.str(digits, 10) + `}`))
	return token("JWT", header+"."+payload+"."+f.str(b64url, 43))
}

func (f *fakes) urlPassword() credential {
	return keyed("password", "postgres://app:", f.str(alnum, 16), "@db.internal:5432/prod")
}

func (f *fakes) bearer() credential {
	return keyed("bearer token", "Authorization: Bearer ", f.str(b64url, 40), "")
}

func (f *fakes) generic() credential {
	return keyed("secret", "SERVICE_SECRET=", f.str(alnum, 32), "")
}

func (f *fakes) password() credential {
	return keyed("password", "password: ", f.str(alnum, 10)+"!", "")
}

// every returns one credential of each kind the tests know, and of each
// prefix of the kinds that have several.
func (f *fakes) every() []credential {
	out := []credential{f.anthropic(), f.anthropicOAuth(), f.openAIProject(), f.openAILegacy(), f.openAIStyle()}
	for _, c := range []byte("pousr") {
		out = append(out, f.github(c))
	}
	out = append(out, f.githubFineGrained())
	for _, p := range []string{"glpat", "gldt", "glrt", "glptt", "glft", "glsoat"} {
		out = append(out, f.gitlab(p))
	}
	for _, p := range []string{"AKIA", "ASIA"} {
		out = append(out, f.awsKeyID(p))
	}
	out = append(out, f.awsSecret(), f.google(), f.slackBot(), f.slackUser(), f.slackWebhook())
	for _, p := range []string{"sk_" + "live_", "rk_" + "live_", "sk_" + "test_", "rk_" + "test_"} {
		out = append(out, f.stripe(p))
	}
	out = append(out, f.npm(), f.pypi(), f.huggingFace(), f.privateKey("RSA ", 4), f.privateKey("", 3),
		f.privateKey("OPENSSH ", 5), f.jwt(), f.urlPassword(), f.bearer(), f.generic(), f.password())
	return out
}
