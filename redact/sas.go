package redact

import "strings"

// The keywords take the ? or & a query's sig= follows: "sig" alone starts
// too many English words (design, signal) for the keyword scan to pass
// over them cheaply (with it, the render of a spine spent 8 % more on
// redaction, counted in instructions).
func init() {
	register("?sig=", one(matchSASSignature))
	register("&sig=", one(matchSASSignature))
}

// sasChars make up a shared access signature's sig value: base64,
// percent-encoded or not.
var sasChars = chars(alnumChars, "%+/=")

// matchSASSignature finds the signature of an Azure shared access
// signature, the sig= of a URL's query (also in a connection string's
// SharedAccessSignature= and a Service Bus token): it grants what the
// signed URL grants to whoever holds it. Its value is known by its shape
// alone, since sig is a common name: once percent-decoded, the base64 of
// an HMAC-SHA256, 43 characters and an =.
func matchSASSignature(s string, hit int) (found, bool) {
	start := hit + len("?sig=")
	end := runMax(s, start, sasChars, 3*44+1)
	v, ok := percentDecoded(s[start:end])
	if !ok || len(v) != 44 || v[43] != '=' || run(v, 0, b64) != 43 || entropy(v) <= secretBits {
		return found{}, false
	}
	return found{Finding{start, end, "Azure SAS signature"}, context}, true
}

// percentDecoded decodes the %2B, %2F and %3D of a base64 value in a URL
// (in either case); any other escape makes it no base64.
func percentDecoded(v string) (string, bool) {
	if strings.IndexByte(v, '%') < 0 {
		return v, true
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '%' {
			b.WriteByte(v[i])
			continue
		}
		if i+2 >= len(v) {
			return "", false
		}
		switch strings.ToUpper(v[i+1 : i+3]) {
		case "2B":
			b.WriteByte('+')
		case "2F":
			b.WriteByte('/')
		case "3D":
			b.WriteByte('=')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}
