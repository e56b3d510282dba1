package redact

import "strings"

// A presigned URL grants what it names to whoever holds it until it
// expires: its signature is the secret, and the rest of the URL (bucket,
// object, date, expiry) stays. The keywords take the parameter's whole
// name and its =, or the ? or & before it, since "sig" starts common
// English words (see sas.go).
func init() {
	register("x-amz-signature=", one(matchHexSignature))
	register("x-goog-signature=", one(matchHexSignature))
	register("?signature=", one(matchQuerySignature))
	register("&signature=", one(matchQuerySignature))
	// The & escaped: in HTML and XML (&amp;) and by Go's JSON encoder.
	register(";signature=", one(matchQuerySignature))
	register(`\u0026signature=`, one(matchQuerySignature))
	// Past the algorithm's name, AWS4- or GOOG4-, whose first bytes
	// start common words (good, google).
	register("-hmac-sha256", one(matchSigV4Header))
}

// hexSignatures are the parameters whose value is a signature in hex:
// SigV4's (an HMAC-SHA256, 64 digits) and Google's V4 (as long, or an RSA
// signature: 512 digits for a 2048-bit key, 2048 for 8192 bits).
var hexSignatures = []struct{ name, kind string }{
	{"x-amz-signature=", "AWS signature"},
	{"x-goog-signature=", "Google signature"},
}

const maxHexSignature = 2048

// matchHexSignature finds the value of X-Amz-Signature= or
// X-Goog-Signature= at hit.
func matchHexSignature(s string, hit int) (found, bool) {
	for _, p := range hexSignatures {
		if hasFoldPrefix(s[hit:], p.name) {
			start := hit + len(p.name)
			if end, ok := hexSignature(s, start); ok {
				return found{Finding{start, end, p.kind}, context}, true
			}
		}
	}
	return found{}, false
}

// hexSignature returns the end of the hex signature at start, if there is
// one: at least 64 digits, an even number, not run into a word, and of
// the entropy of random digits (a row of zeros is a placeholder).
func hexSignature(s string, start int) (int, bool) {
	end := runMax(s, start, hexChars, maxHexSignature+1)
	n := end - start
	if n < 64 || n > maxHexSignature || n%2 != 0 || end < len(s) && isAlnum(s[end]) || entropy(s[start:end]) <= 3 {
		return 0, false
	}
	return end, true
}

// querySigChars make up a Signature= value: base64, percent-encoded or
// not, and CloudFront's variant of it (- _ ~ for + = /).
var (
	querySigChars = chars(alnumChars, "%+/=-_~")
	sigB64        = chars(alnumChars, "+/=-_~")
)

// matchQuerySignature finds the value of a query's Signature=: S3's
// version 2 signed URLs (beside AWSAccessKeyId= and Expires=, the base64
// of an HMAC-SHA1), Google's version 2 (an RSA signature) and
// CloudFront's. Signature is a common name: the value is one by its
// shape, once percent-decoded base64 of at least 20 bytes (27
// characters) with a digit, of a secret's entropy.
func matchQuerySignature(s string, hit int) (found, bool) {
	start := hit + strings.IndexByte(s[hit:], '=') + 1
	end := runMax(s, start, querySigChars, maxValue+1)
	v, ok := percentDecoded(s[start:end])
	if !ok || end-start > maxValue || len(v) < 27 || run(v, 0, sigB64) != len(v) || !hasDigit(v) || entropy(v) <= secretBits {
		return found{}, false
	}
	return found{Finding{start, end, "URL signature"}, context}, true
}

// maxSigV4Header bounds how far after its algorithm a SigV4
// Authorization header's Signature= is looked for: past the Credential=
// and the SignedHeaders= list.
const maxSigV4Header = 2 << 10

// matchSigV4Header finds the signature of an Authorization header signed
// with SigV4 (AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…,
// Signature=<hex>), or Google's HMAC version of it, on the header's line
// or the lines its commas fold it onto.
func matchSigV4Header(s string, hit int) (found, bool) {
	kind := "AWS signature"
	switch {
	case hit >= 5 && strings.EqualFold(s[hit-5:hit], "goog4"):
		kind = "Google signature"
	case hit < 4 || !strings.EqualFold(s[hit-4:hit], "aws4"):
		return found{}, false
	}
	i := skipLineBreaks(s, hit+len("-hmac-sha256"))
	if !hasFoldPrefix(s[i:], "credential=") {
		return found{}, false
	}
	i += len("credential=")
	line := s[i:foldedLineEnd(s, i, min(len(s), i+maxSigV4Header))]
	j := indexFold(line, "signature=")
	if j < 0 {
		return found{}, false
	}
	start := i + j + len("signature=")
	end, ok := hexSignature(s, start)
	if !ok {
		return found{}, false
	}
	return found{Finding{start, end, kind}, context}, true
}

// foldedLineEnd is where the line at i ends, or, past each line break
// (escaped too: \n) that a comma ends a line before, the line after it:
// a header whose fields a log or a document prints a line each.
func foldedLineEnd(s string, i, limit int) int {
	for {
		e := lineEnd(s, i, limit)
		if e >= limit || !strings.HasSuffix(strings.TrimRight(strings.TrimSuffix(s[i:e], `\r`), " \t\r"), ",") {
			return e
		}
		i = e + 1
		if s[e] == '\\' {
			i++ // the n of an escaped line break
		}
	}
}

// skipLineBreaks skips the blanks at i in s and at most one line break
// among them, raw or escaped (\n, \r\n): the algorithm of a header a field
// a line.
func skipLineBreaks(s string, i int) int {
	i = skipBlanks(s, i, len(s))
	for _, br := range []string{"\r\n", "\n", `\r\n`, `\n`} {
		if strings.HasPrefix(s[i:], br) {
			return skipBlanks(s, i+len(br), len(s))
		}
	}
	return i
}
