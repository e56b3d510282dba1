package redact_test

import (
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/fakecred"
	"github.com/bottled-dev/bottled/redact"
)

// TestCookies: the session values of a Cookie or Set-Cookie header, and
// of curl's -b and --cookie, are redacted; the cookies' names, their
// attributes and values too short or too plain to be a session stay.
func TestCookies(t *testing.T) {
	f := fakecred.New(30)
	sid, csrf := f.Str(fakecred.Alnum, 40), f.Str(fakecred.Alnum, 32)
	signed := "s%3A" + f.Str(fakecred.B64URL, 32) + "." + f.Str(fakecred.B64, 43)
	C := R("cookie")
	runContextCases(t, []contextCase{
		{"header", "Cookie: session=" + sid + "; theme=dark", "Cookie: session=" + C + "; theme=dark"},
		{"header, two sessions", "Cookie: session=" + sid + "; csrftoken=" + csrf,
			"Cookie: session=" + C + "; csrftoken=" + C},
		{"lower case", "cookie: sid=" + sid, "cookie: sid=" + C},
		{"set-cookie", "Set-Cookie: sid=" + sid + "; Path=/; HttpOnly", "Set-Cookie: sid=" + C + "; Path=/; HttpOnly"},
		{"in prose", "the server sent Cookie: sessionid=" + sid + " back", "the server sent Cookie: sessionid=" + C + " back"},
		{"curl -H", "curl -H 'Cookie: session=" + sid + "' https://x.example", "curl -H 'Cookie: session=" + C + "' https://x.example"},
		{"curl -H, quoted value", `curl -H 'Cookie: a=1; session="` + sid + `"' https://x`,
			`curl -H 'Cookie: a=1; session="` + C + `"' https://x`},
		{"json", `{"Cookie": "connect.sid=` + signed + `"}`, `{"Cookie": "connect.sid=` + C + `"}`},
		{"curl -b", "curl -b 'session=" + sid + "' https://x.example", "curl -b 'session=" + C + "' https://x.example"},
		{"curl -b unquoted", "curl -sS -b session=" + sid + " https://x.example", "curl -sS -b session=" + C + " https://x.example"},
		{"curl --cookie", "curl --cookie \"sid=" + sid + "; lang=en\" https://x", "curl --cookie \"sid=" + C + "; lang=en\" https://x"},
		{"curl --cookie=", "curl --cookie=sid=" + sid + " https://x", "curl --cookie=sid=" + C + " https://x"},
		{"curl, two cookies", "curl -b 'a=" + sid + "; b=" + csrf + "' https://x", "curl -b 'a=" + C + "; b=" + C + "' https://x"},
	})
	keptAsIs(t,
		"Cookie: theme=dark; lang=en-US; tz=Europe/Berlin",
		"Set-Cookie: sid=deleted; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
		"curl -b cookies.txt -c cookies.txt https://x.example",
		"curl --cookie-jar jar.txt https://x.example",
		"the cookie: it is set by the login form",
		"cookies: session=abc, see the docs",
		"Cookie: session=$SESSION_COOKIE",
		"Cookie: session=<your-session-cookie>",
	)
}

// TestToolPasswordFlagsJava: keytool's and jarsigner's password flags and
// openssl's -passin, -passout and enc -k take a password.
func TestToolPasswordFlagsJava(t *testing.T) {
	pw := fakecred.New(31).Str(fakecred.Alnum, 7) + "!q7Z"
	P := R("password")
	runContextCases(t, []contextCase{
		{"keytool", "keytool -genkeypair -keystore k.jks -storepass " + pw + " -keypass " + pw + " -alias x",
			"keytool -genkeypair -keystore k.jks -storepass " + P + " -keypass " + P + " -alias x"},
		{"keytool import", "keytool -importkeystore -srcstorepass " + pw + " -deststorepass " + pw + " -noprompt",
			"keytool -importkeystore -srcstorepass " + P + " -deststorepass " + P + " -noprompt"},
		{"keytool keypasswd", "keytool -keypasswd -alias x -keypass " + pw + " -new " + pw,
			"keytool -keypasswd -alias x -keypass " + P + " -new " + P},
		{"keytool quoted", "keytool -list -keystore k.p12 -storepass '" + pw + "'", "keytool -list -keystore k.p12 -storepass '" + P + "'"},
		{"jarsigner", "jarsigner -keystore k.jks -storepass " + pw + " app.jar alias",
			"jarsigner -keystore k.jks -storepass " + P + " app.jar alias"},
		{"openssl passin", "openssl pkcs12 -export -in c.pem -passin pass:" + pw + " -passout pass:" + pw,
			"openssl pkcs12 -export -in c.pem -passin pass:" + P + " -passout pass:" + P},
		{"openssl enc -k", "openssl enc -aes-256-cbc -salt -k " + pw + " -in a -out b",
			"openssl enc -aes-256-cbc -salt -k " + P + " -in a -out b"},
	})
	keptAsIs(t,
		"keytool -list -keystore k.jks -storepass changeit",
		"keytool -list -storepass:env STOREPASS -keystore k.jks",
		"keytool -list -storepass:file pass.txt -keystore k.jks",
		`keytool -list -storepass "$STOREPASS"`,
		"keytool -keypasswd -alias mykey",
		"openssl pkcs12 -in k.p12 -passin env:P12_PASSWORD",
		"openssl req -new -key k.pem -keyout out.pem -out req.csr",
		"openssl enc -d -aes-256-cbc -kfile pass.txt -in a",
	)
}

// TestAzureSAS: the signature of an Azure shared access signature, in a
// URL's query and in a connection string, and a storage account's key.
func TestAzureSAS(t *testing.T) {
	f := fakecred.New(32)
	sig := f.Str(fakecred.B64, 43) + "="
	enc := strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace(sig)
	key := f.Str(fakecred.B64, 86) + "=="
	S := R("Azure SAS signature")
	runContextCases(t, []contextCase{
		{"blob URL", "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&ss=b&srt=co&sp=r&se=2030-01-01T00:00:00Z&sig=" + enc,
			"https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&ss=b&srt=co&sp=r&se=2030-01-01T00:00:00Z&sig=" + S},
		{"sig first", "https://a.blob.core.windows.net/c?sig=" + enc + "&sv=2022-11-02&sp=r",
			"https://a.blob.core.windows.net/c?sig=" + S + "&sv=2022-11-02&sp=r"},
		{"lower-case escapes", "?sv=2021-08-06&sig=" + strings.ReplaceAll(enc, "%3D", "%3d"),
			"?sv=2021-08-06&sig=" + S},
		{"not encoded", "azcopy copy 'https://a.blob.core.windows.net/c?sv=2022-11-02&sig=" + sig + "' .",
			"azcopy copy 'https://a.blob.core.windows.net/c?sv=2022-11-02&sig=" + S + "' ."},
		{"connection string SAS", "BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sig=" + enc,
			"BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sig=" + S},
		{"service bus", "SharedAccessSignature sr=x.servicebus.windows.net&sig=" + enc + "&se=1700000000&skn=RootManageSharedAccessKey",
			"SharedAccessSignature sr=x.servicebus.windows.net&sig=" + S + "&se=1700000000&skn=RootManageSharedAccessKey"},
		{"account key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + key + ";EndpointSuffix=core.windows.net",
			"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + R("secret") + ";EndpointSuffix=core.windows.net"},
		{"shared access key", "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=" + sig,
			"Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=" + R("secret")},
	})
	keptAsIs(t,
		"https://example.com/search?sig=abc&q=1",
		"https://example.com/?sig=true",
		"the sig= parameter carries the signature",
		"?sv=2022-11-02&sig=<signature>",
		"func sig=(a, b)",
	)
}

// TestLongAuthorization: an Authorization header's credentials are
// redacted whatever their length, from the shortest a scheme's are to
// past any bound a value has.
func TestLongAuthorization(t *testing.T) {
	f := fakecred.New(33)
	for _, n := range []int{8, 40, 2000, 8 << 10, 8<<10 + 1, 64 << 10} {
		tok := f.Str(fakecred.B64URL+"~+/.", n)
		runContextCases(t, []contextCase{
			{"bearer", "Authorization: Bearer " + tok + "\nHost: x", "Authorization: Bearer " + R("bearer token") + "\nHost: x"},
			{"curl", "curl -H 'Authorization: Bearer " + tok + "' https://x", "curl -H 'Authorization: Bearer " + R("bearer token") + "' https://x"},
			{"token", "Authorization: token " + tok, "Authorization: token " + R("authorization")},
		})
		if n >= 16 {
			runContextCases(t, []contextCase{
				{"bearer in prose", "sent Bearer " + tok + " then", "sent Bearer " + R("bearer token") + " then"},
			})
		}
	}
	b64 := f.Str(fakecred.B64, 12<<10) + "=="
	runContextCases(t, []contextCase{
		{"basic", "Authorization: Basic " + b64, "Authorization: Basic " + R("basic auth credentials")},
	})
}

// TestPresignedURLs: the signature of a presigned URL grants what the URL
// grants to whoever holds it until it expires: AWS's SigV4
// X-Amz-Signature and its session token, Google's X-Goog-Signature, and
// the Signature= of S3's version 2, Google's and CloudFront's signed URLs
// go, the rest of the URL stays (X-Amz-Credential, a credential by its
// name, goes whole, named by the access key ID at its start).
func TestPresignedURLs(t *testing.T) {
	f := fakecred.New(34)
	pct := strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D")
	sigV4, hmacGoog, rsaGoog := f.Str(fakecred.Hex, 64), f.Str(fakecred.Hex, 64), f.Str(fakecred.Hex, 512)
	session := pct.Replace("IQoJb3JpZ2luX2Vj" + f.Str(fakecred.B64, 700) + "==")
	v2 := pct.Replace(f.Str(fakecred.B64, 27) + "=")
	googV2 := pct.Replace(f.Str(fakecred.B64, 342) + "==")
	cloudFront := f.Str(fakecred.Alnum+"-~", 170) + "__"
	keyID := "ASIA" + f.Str(fakecred.Base32U, 16)
	A, G, U := R("AWS signature"), R("Google signature"), R("URL signature")
	s3 := "https://b.s3.us-east-1.amazonaws.com/k.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential="
	cred := "%2F20240101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20240101T000000Z&X-Amz-Expires=3600"
	goog := "https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=sa%40p.iam.gserviceaccount.com%2F20240101%2Fauto%2Fstorage%2Fgoog4_request&X-Goog-Date=20240101T000000Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host"
	runContextCases(t, []contextCase{
		{"SigV4", s3 + keyID + cred + "&X-Amz-Security-Token=" + session + "&X-Amz-SignedHeaders=host&X-Amz-Signature=" + sigV4,
			s3 + R("AWS access key ID") + cred[strings.Index(cred, "&"):] + "&X-Amz-Security-Token=" + R("secret") + "&X-Amz-SignedHeaders=host&X-Amz-Signature=" + A},
		{"SigV4, signature first, quoted", "curl 'https://b.s3.amazonaws.com/k?X-Amz-Signature=" + sigV4 + "&X-Amz-Date=20240101T000000Z' -o k",
			"curl 'https://b.s3.amazonaws.com/k?X-Amz-Signature=" + A + "&X-Amz-Date=20240101T000000Z' -o k"},
		{"SigV4, lower case", "?x-amz-signature=" + sigV4 + "\n", "?x-amz-signature=" + A + "\n"},
		{"SigV4 in JSON", `{"url": "https://b.s3.amazonaws.com/k?X-Amz-Expires=60\u0026X-Amz-Signature=` + sigV4 + `"}`,
			`{"url": "https://b.s3.amazonaws.com/k?X-Amz-Expires=60\u0026X-Amz-Signature=` + A + `"}`},
		{"SigV4 header", "Authorization: AWS4-HMAC-SHA256 Credential=" + keyID + "/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-date, Signature=" + sigV4,
			"Authorization: AWS4-HMAC-SHA256 " + R("AWS access key ID") + ", SignedHeaders=host;range;x-amz-date, Signature=" + A},
		{"Google V4, RSA", goog + "&X-Goog-Signature=" + rsaGoog, goog + "&X-Goog-Signature=" + G},
		{"Google V4, HMAC", "?X-Goog-Signature=" + hmacGoog + "&X-Goog-Date=20240101T000000Z", "?X-Goog-Signature=" + G + "&X-Goog-Date=20240101T000000Z"},
		{"S3 version 2", "https://b.s3.amazonaws.com/k?AWSAccessKeyId=" + keyID + "&Expires=1700000000&Signature=" + v2,
			"https://b.s3.amazonaws.com/k?AWSAccessKeyId=" + R("AWS access key ID") + "&Expires=1700000000&Signature=" + U},
		{"S3 version 2, example key", "https://b.s3.amazonaws.com/k?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=" + v2 + "&Expires=1700000000",
			"https://b.s3.amazonaws.com/k?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=" + U + "&Expires=1700000000"},
		{"S3 version 2, not encoded", "wget 'https://b.s3.amazonaws.com/k?Signature=" + strings.NewReplacer("%2B", "+", "%2F", "/", "%3D", "=").Replace(v2) + "&Expires=1700000000'",
			"wget 'https://b.s3.amazonaws.com/k?Signature=" + U + "&Expires=1700000000'"},
		{"Google version 2", "https://storage.googleapis.com/b/o?GoogleAccessId=sa@p.iam.gserviceaccount.com&Expires=1700000000&Signature=" + googV2,
			"https://storage.googleapis.com/b/o?GoogleAccessId=sa@p.iam.gserviceaccount.com&Expires=1700000000&Signature=" + U},
		{"S3 version 2 in HTML", `<a href="https://b.s3.amazonaws.com/k?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&amp;Expires=1700000000&amp;Signature=` + v2 + `">`,
			`<a href="https://b.s3.amazonaws.com/k?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&amp;Expires=1700000000&amp;Signature=` + U + `">`},
		{"S3 version 2 in Go's JSON", `{"url":"https://b.s3.amazonaws.com/k?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE\u0026Expires=1700000000\u0026Signature=` + v2 + `"}`,
			`{"url":"https://b.s3.amazonaws.com/k?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE\u0026Expires=1700000000\u0026Signature=` + U + `"}`},
		{"CloudFront", "https://d1.cloudfront.net/v.mp4?Expires=1700000000&Signature=" + cloudFront + "&Key-Pair-Id=K2JCJMDEHXQW5F",
			"https://d1.cloudfront.net/v.mp4?Expires=1700000000&Signature=" + U + "&Key-Pair-Id=K2JCJMDEHXQW5F"},
	})
	header := "Authorization: GOOG4-HMAC-SHA256 Credential=GOOG1E" + f.Str(fakecred.Alnum, 20) + "/20240101/auto/storage/goog4_request, SignedHeaders=host, Signature=" + hmacGoog
	// As of SigV4's, the credential scope goes whole with the header's
	// credentials, and the algorithm stays.
	if got, want := redact.Builtin().Redact(header), "Authorization: GOOG4-HMAC-SHA256 "+R("authorization")+", SignedHeaders=host, Signature="+G; got != want {
		t.Errorf("Google's HMAC header:\n got %q\nwant %q", got, want)
	}
	lower := "authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20240101/us-east-1/s3/aws4_request, signedheaders=host, signature=" + sigV4
	if got, want := redact.Builtin().Redact(lower), strings.TrimSuffix(lower, sigV4)+R("AWS signature"); got != want {
		t.Errorf("SigV4 header in lower case:\n got %q\nwant %q", got, want)
	}
	// A field a line, after the algorithm and each comma, as request logs
	// and AWS's own page on the header print it (a blank before each line
	// break there); in a JSON string, the line break escaped.
	for _, br := range []string{"\n  ", "\r\n\t", " \n", "\n", "\n        ", `\n  `, `\r\n  `} {
		folded := "Authorization: AWS4-HMAC-SHA256" + br + "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request," + br +
			"SignedHeaders=host;range;x-amz-date," + br + "Signature=" + sigV4
		if got, want := redact.Builtin().Redact(folded), strings.TrimSuffix(folded, sigV4)+R("AWS signature"); got != want {
			t.Errorf("SigV4 header folded at its commas:\n got %q\nwant %q", got, want)
		}
	}
	keptAsIs(t,
		"?X-Amz-Signature=<signature>&X-Amz-Date=x",
		"Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request\n\nSignature="+sigV4,
		"&X-Amz-Signature=...",
		"X-Amz-Signature="+strings.Repeat("0", 64),
		"X-Amz-Signature="+sigV4[:40],
		"the X-Amz-Signature= parameter holds the signature",
		"X-Goog-Signature=${SIGNATURE}",
		"https://example.com/?signature=required&page=2",
		"?signature="+f.Str(fakecred.Lower, 30),
		"&Signature=%3Csignature%3E",
		"Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=<sig>",
	)
}

// TestOpenSSLSecrets: openssl's raw key flags take the key itself (-K of
// enc and the cipher commands, -psk of s_client and s_server: hex), and
// -pass, -passin and -passout take pass:x, a password however short, and
// dgst's -hmac and -macopt key: or hexkey: an HMAC's key, however short; the
// IV, salt and where a password is read from (env:, file:, fd:, stdin)
// are no secret.
func TestOpenSSLSecrets(t *testing.T) {
	f := fakecred.New(35)
	key256, key128, iv := f.Str(fakecred.Hex, 64), f.Str(fakecred.Hex, 32), f.Str(fakecred.Hex, 32)
	pw := f.Str(fakecred.Alnum, 7) + "!q7Z"
	K, P, H := R("encryption key"), R("password"), R("HMAC key")
	runContextCases(t, []contextCase{
		{"enc -K", "openssl enc -aes-256-cbc -K " + key256 + " -iv " + iv + " -in a -out b",
			"openssl enc -aes-256-cbc -K " + K + " -iv " + iv + " -in a -out b"},
		{"cipher command -K", "openssl aes-128-cbc -nosalt -K " + strings.ToUpper(key128) + " -iv 000102030405060708090a0b0c0d0e0f -in a",
			"openssl aes-128-cbc -nosalt -K " + K + " -iv 000102030405060708090a0b0c0d0e0f -in a"},
		{"-K quoted, last", `openssl enc -d -aes-256-ctr -iv ` + iv + ` -K "` + key256 + `"`, `openssl enc -d -aes-256-ctr -iv ` + iv + ` -K "` + K + `"`},
		{"-K continued line", "openssl enc -aes-256-cbc \\\n  -K " + key256 + " \\\n  -iv " + iv,
			"openssl enc -aes-256-cbc \\\n  -K " + K + " \\\n  -iv " + iv},
		{"-psk", "openssl s_client -connect h:443 -psk_identity id -psk " + key128, "openssl s_client -connect h:443 -psk_identity id -psk " + K},
		{"-psk short", "openssl s_server -accept 4433 -nocert -psk 1a2b3c4d -psk_hint h", "openssl s_server -accept 4433 -nocert -psk " + K + " -psk_hint h"},
		{"-pass pass:", "openssl enc -aes-256-cbc -pbkdf2 -pass pass:" + pw + " -in a", "openssl enc -aes-256-cbc -pbkdf2 -pass pass:" + P + " -in a"},
		{"-pass pass: a word", "openssl enc -aes-256-cbc -pass pass:secret -in a", "openssl enc -aes-256-cbc -pass pass:" + P + " -in a"},
		{"-passin pass: short", "openssl pkcs12 -in k.p12 -passin pass:x -nodes", "openssl pkcs12 -in k.p12 -passin pass:" + P + " -nodes"},
		{"-passout pass: short", "openssl genrsa -aes256 -passout pass:x -out k.pem 2048", "openssl genrsa -aes256 -passout pass:" + P + " -out k.pem 2048"},
		{"-K in a JSON string", `{"command": "openssl enc -aes-256-cbc -K ` + key256 + `"}`, `{"command": "openssl enc -aes-256-cbc -K ` + K + `"}`},
		{"-pass pass: in a JSON string", `{"command": "openssl enc -pass pass:` + pw + `"}`, `{"command": "openssl enc -pass pass:` + P + `"}`},
		{"-pass 'pass:…' with a blank", "openssl enc -aes-256-cbc -pass 'pass:my long phrase' -in a", "openssl enc -aes-256-cbc -pass 'pass:" + P + "' -in a"},
		{"-pass pass:'…' with a blank", `openssl enc -aes-256-cbc -pass pass:"my long phrase" -in a`, `openssl enc -aes-256-cbc -pass pass:"` + P + `" -in a`},
		{"dgst -hmac", "openssl dgst -sha256 -hmac " + pw + " body.json", "openssl dgst -sha256 -hmac " + H + " body.json"},
		{"dgst -hmac quoted, a word", `echo -n "$body" | openssl dgst -sha256 -hmac "secret"`, `echo -n "$body" | openssl dgst -sha256 -hmac "` + H + `"`},
		{"dgst -hmac piped, last", "printf %s \"$payload\" | openssl sha256 -hmac '" + key128 + "'", "printf %s \"$payload\" | openssl sha256 -hmac '" + H + "'"},
		{"-macopt key:", "openssl dgst -sha256 -mac HMAC -macopt key:" + pw + " f", "openssl dgst -sha256 -mac HMAC -macopt key:" + H + " f"},
		{"-macopt hexkey:", "openssl mac -digest SHA256 -macopt hexkey:" + key256 + " HMAC", "openssl mac -digest SHA256 -macopt hexkey:" + H + " HMAC"},
		{"-macopt 'key:…' quoted", "openssl dgst -mac hmac -macopt 'key:my long phrase' f", "openssl dgst -mac hmac -macopt 'key:" + H + "' f"},
		{"-hmac quoted, with | and ;", "openssl dgst -sha256 -hmac 'k3y|with;pipe' file", "openssl dgst -sha256 -hmac '" + H + "' file"},
		{"-hmac quoted, with &, piped on", `openssl dgst -hmac "k&ey" f | xxd`, `openssl dgst -hmac "` + H + `" f | xxd`},
		{"-macopt quoted, with &", "openssl dgst -mac hmac -macopt 'key:a&b' f", "openssl dgst -mac hmac -macopt 'key:" + H + "' f"},
		{"-pass quoted, with ;", `openssl enc -pass "pass:x;y" -in a`, `openssl enc -pass "pass:` + P + `" -in a`},
		{"-pass quoted, with | and a blank", `openssl enc -pass "pass:a|b c" -in a`, `openssl enc -pass "pass:` + P + `" -in a`},
		{"-hmac, an escaped quote", `openssl dgst -sha256 -hmac "ab\"cdSECRETTAIL" f`, `openssl dgst -sha256 -hmac "` + H + `" f`},
		{"-pass, an escaped quote", `openssl enc -pass "pass:ab\"SECRETTAIL" -in a`, `openssl enc -pass "pass:` + P + `" -in a`},
		{"-hmac, typographic quotes", "openssl dgst -hmac “s3cr3tkey” f", "openssl dgst -hmac “" + H + "” f"},
		{"-hmac in a JSON string, escaped quotes", `{"command": "openssl dgst -hmac \"k3y|x\" f"}`, `{"command": "openssl dgst -hmac \"` + H + `\" f"}`},
	})
	keptAsIs(t,
		"openssl enc -aes-256-cbc -pass env:MYPASS -in a",
		"openssl enc -aes-256-cbc -pass file:pw.txt -in a",
		"openssl rsa -in k.pem -passin fd:3",
		"openssl rsa -in k.pem -passin stdin",
		`openssl enc -aes-256-cbc -pass "pass:$PASSWORD" -in a`,
		"openssl enc -aes-256-cbc -pass pass:${PW} -in a",
		"openssl enc -aes-256-cbc -K $KEY -iv $IV",
		`openssl enc -aes-256-cbc -K "$(cat key.hex)" -iv `+iv,
		"openssl enc -aes-256-cbc -K <key> -iv <iv>",
		"openssl enc -aes-256-cbc -iv "+iv+" -S 0102030405060708",
		"openssl enc -aes-128-cbc -kfile k.txt -iv "+iv,
		"openssl s_client -connect h:443 -psk_identity client1",
		"openssl s_client -connect h:443 -psk $PSK",
		"openssl s_server -psk_hint 1a2b3c4d",
		"With openssl s_client, pass -psk a hex key",
		"openssl s_server -psk be careful",
		`openssl dgst -sha256 -hmac "$WEBHOOK_SECRET" body.json`,
		"Use openssl dgst -hmac with your key",
		"pipe the body into openssl dgst -sha256 -hmac and compare",
		"The openssl -hmac flag takes the key",
		"openssl dgst -sha256 -hmac ${KEY} f",
		"openssl dgst -sha256 -mac HMAC -macopt digest:SHA256 f",
		"openssl mac -cipher AES-128-CBC -macopt hexkey:$KEY CMAC",
		"openssl dgst -sha256 -hmac <key> f",
		"sort -K "+key256,
		"openssl enc -aes-256-cbc -K "+key256+"g -iv "+iv,
	)
}

// TestPositionalPasswords: htpasswd -b takes the password as its last
// word, after the file and the user (after the user alone with -n); the
// user and the file stay, and without -b there is no password on the line.
func TestPositionalPasswords(t *testing.T) {
	pw := fakecred.New(36).Str(fakecred.Alnum, 9) + "!q7Z"
	P := R("password")
	runContextCases(t, []contextCase{
		{"-b", "htpasswd -b /etc/nginx/.htpasswd alice " + pw, "htpasswd -b /etc/nginx/.htpasswd alice " + P},
		{"-bc", "sudo htpasswd -bc /etc/apache2/.htpasswd admin " + pw + " && sudo systemctl reload apache2",
			"sudo htpasswd -bc /etc/apache2/.htpasswd admin " + P + " && sudo systemctl reload apache2"},
		{"-c -b -B -C cost", "htpasswd -c -b -B -C 12 .htpasswd bob '" + pw + "'", "htpasswd -c -b -B -C 12 .htpasswd bob '" + P + "'"},
		{"however short", "htpasswd -b .htpasswd admin hunter2", "htpasswd -b .htpasswd admin " + P},
		{"a plain word", "htpasswd -b .htpasswd alice password", "htpasswd -b .htpasswd alice " + P},
		{"quoted with a blank", `htpasswd -b .htpasswd admin "my long phrase"`, `htpasswd -b .htpasswd admin "` + P + `"`},
		{"-nb to stdout", "htpasswd -nbB admin " + pw + " > auth/htpasswd", "htpasswd -nbB admin " + P + " > auth/htpasswd"},
		{"docker run", "docker run --rm --entrypoint htpasswd httpd:2 -Bbn testuser " + pw + " > auth/htpasswd",
			"docker run --rm --entrypoint htpasswd httpd:2 -Bbn testuser " + P + " > auth/htpasswd"},
		{"in a JSON string", `{"command":"htpasswd -b -c .htpasswd ops ` + pw + `","description":"add a user"}`,
			`{"command":"htpasswd -b -c .htpasswd ops ` + P + `","description":"add a user"}`},
		{"cost in the cluster, to stdout", `htpasswd -bnBC 10 "" ` + pw + ` | tr -d ':\n'`, `htpasswd -bnBC 10 "" ` + P + ` | tr -d ':\n'`},
		{"-bBC cost", "htpasswd -bBC 12 /etc/nginx/.htpasswd admin " + pw, "htpasswd -bBC 12 /etc/nginx/.htpasswd admin " + P},
		{"a script in a JSON string", `{"content":"#!/bin/sh\nhtpasswd -bc /etc/nginx/.htpasswd admin ` + pw + `\nnginx -s reload\n"}`,
			`{"content":"#!/bin/sh\nhtpasswd -bc /etc/nginx/.htpasswd admin ` + P + `\nnginx -s reload\n"}`},
		{"cost on a continued line", "htpasswd -bnBC \\\n 10 alice " + pw, "htpasswd -bnBC \\\n 10 alice " + P},
		{"a comment after it", "htpasswd -bc f alice " + pw + " # add alice", "htpasswd -bc f alice " + P + " # add alice"},
		{"CRLF", "htpasswd -b f alice " + pw + "\r\nnext", "htpasswd -b f alice " + P + "\r\nnext"},
		{"continued after the flag", "htpasswd -b \\\n  /etc/nginx/.htpasswd alice " + pw, "htpasswd -b \\\n  /etc/nginx/.htpasswd alice " + P},
		{"continued before each word", "htpasswd -bc /etc/nginx/.htpasswd \\\n  alice \\\n  " + pw, "htpasswd -bc /etc/nginx/.htpasswd \\\n  alice \\\n  " + P},
	})
	keptAsIs(t,
		"htpasswd -c /etc/nginx/.htpasswd alice",
		"htpasswd -B .htpasswd alice",
		"htpasswd -D .htpasswd alice",
		"htpasswd -v .htpasswd alice",
		"htpasswd -b .htpasswd alice",
		"htpasswd -b \\\n .htpasswd alice",
		"htpasswd -nbB [redacted: password]",
		"htpasswd -nbB admin -p[redacted: password] alice",
		"htpasswd -b .htpasswd alice \\\n",
		`htpasswd -bc .htpasswd admin "$ADMIN_PASSWORD"`,
		"htpasswd -nbB admin <password>",
		"htpasswd -bi .htpasswd alice < pw.txt",
		"the htpasswd -b flag takes the password on the command line",
		"use htpasswd -b file user pass to set one",
	)
}

// TestSambaUserPasswords: smbclient's -U and --user take user%password;
// the user (with its domain) stays, the password goes however short.
func TestSambaUserPasswords(t *testing.T) {
	pw := fakecred.New(37).Str(fakecred.Alnum, 9) + "!q7Z"
	P := R("password")
	runContextCases(t, []contextCase{
		{"-U", "smbclient //srv/share -U alice%" + pw + " -c 'ls'", "smbclient //srv/share -U alice%" + P + " -c 'ls'"},
		{"--user=", "smbclient -L //10.0.0.5 --user=alice%" + pw, "smbclient -L //10.0.0.5 --user=alice%" + P},
		{"--user", "smbclient -L //10.0.0.5 --user alice%" + pw, "smbclient -L //10.0.0.5 --user alice%" + P},
		{"domain, quoted, short", `smbclient '//srv/c$' -U 'DOM\alice%pw' -c 'get a.txt'`, `smbclient '//srv/c$' -U 'DOM\alice%` + P + `' -c 'get a.txt'`},
		{"attached", "smbclient //srv/share -Ualice%" + pw, "smbclient //srv/share -Ualice%" + P},
		{"quoted with a blank", `smbclient //srv/share -U "alice%my long phrase"`, `smbclient //srv/share -U "alice%` + P + `"`},
		{"rpcclient", "rpcclient -U 'alice%" + pw + "' 10.0.0.5 -c enumdomusers", "rpcclient -U 'alice%" + P + "' 10.0.0.5 -c enumdomusers"},
	})
	keptAsIs(t,
		"smbclient //srv/share -U alice",
		"smbclient -L //srv -U%",
		"smbclient -L //srv -N",
		"smbclient //srv/share -U alice%",
		`smbclient //srv/share -U "alice%$SMB_PASSWORD"`,
		"smbclient //srv/share -U 'DOM\\alice' -W CORP",
		"smbclient //srv/share -U alice%<password>",
		"smbclient //srv/share -A creds.txt -c 'ls 100%'",
	)
}

// TestNetUsePasswords: Windows' net use takes the password as a word of
// its own after the share, before or after /user:; the device, the share
// and the user stay, and * (it asks) or a reference is none.
func TestNetUsePasswords(t *testing.T) {
	pw := fakecred.New(39).Str(fakecred.Alnum, 9) + "!q7Z"
	P := R("password")
	runContextCases(t, []contextCase{
		{"device, share, password, user", `net use Z: \\fileserver\share ` + pw + ` /user:CORP\alice`, `net use Z: \\fileserver\share ` + P + ` /user:CORP\alice`},
		{"however short", `net use \\10.0.0.5\ipc$ hunter2 /user:administrator`, `net use \\10.0.0.5\ipc$ ` + P + ` /user:administrator`},
		{"after /user:", `net use \\srv\share /user:alice ` + pw, `net use \\srv\share /user:alice ` + P},
		{"quoted", `net use Z: "\\srv\my share" "` + pw + `" /user:alice /persistent:no`, `net use Z: "\\srv\my share" "` + P + `" /user:alice /persistent:no`},
		{"CRLF", "net use Z: \\\\srv\\share " + pw + " /user:alice\r\nZ:", "net use Z: \\\\srv\\share " + P + " /user:alice\r\nZ:"},
		{"output redirected", `net use Z: \\srv\share ` + pw + ` /user:CORP\alice >nul 2>&1`, `net use Z: \\srv\share ` + P + ` /user:CORP\alice >nul 2>&1`},
		{"after cmd's prompt", `C:\Users\alice>net use Z: \\srv\share ` + pw, `C:\Users\alice>net use Z: \\srv\share ` + P},
		{"after PowerShell's prompt", `PS C:\> net use Z: \\srv\share ` + pw, `PS C:\> net use Z: \\srv\share ` + P},
		{"a batch file in JSON", `{"content":"@echo off\r\nnet use Z: \\\\srv\\share ` + pw + ` /user:CORP\\alice\r\ndir Z:\r\n"}`,
			`{"content":"@echo off\r\nnet use Z: \\\\srv\\share ` + P + ` /user:CORP\\alice\r\ndir Z:\r\n"}`},
		{"a comment after it", `net use Z: \\srv\share ` + pw + ` # map the drive`, `net use Z: \\srv\share ` + P + ` # map the drive`},
		{"a # in the password", `net use Z: \\srv\share #` + pw + ` /user:alice`, `net use Z: \\srv\share ` + P + ` /user:alice`},
		{"after PowerShell's prompt, a blank in the path", `PS C:\Users\John Smith> net use Z: \\srv\share ` + pw, `PS C:\Users\John Smith> net use Z: \\srv\share ` + P},
		{"after cmd's prompt, a blank in the path", `C:\Program Files\App> net use Z: \\srv\share ` + pw, `C:\Program Files\App> net use Z: \\srv\share ` + P},
		{"after cmd /q /c", `cmd /q /c net use Z: \\srv\share ` + pw, `cmd /q /c net use Z: \\srv\share ` + P},
		{"after cmd /c", `cmd /c net use Z: \\srv\share ` + pw + ` /user:alice`, `cmd /c net use Z: \\srv\share ` + P + ` /user:alice`},
		{"after cmd.exe /C", `cmd.exe /C "net use Z: \\srv\share ` + pw + `"`, `cmd.exe /C "net use Z: \\srv\share ` + P + `"`},
		{"upper case, after &&", `cd C:\ && NET USE Y: \\srv\d ` + pw, `cd C:\ && NET USE Y: \\srv\d ` + P},
	})
	keptAsIs(t,
		`net use Z: \\srv\share /user:alice *`,
		`net use Z: \\srv\share`,
		`net use Z: /delete`,
		`net use \\srv\share /user:alice /savecred`,
		`net use Z: \\srv\share %SHARE_PASSWORD% /user:alice`,
		`net use \\srv\share to map the drive`,
		`net use the drive letter, then \\srv\share hunter2`,
		"use net use \\\\srv\\share /user:alice and type it",
		"net user alice "+pw,
		"net use",
		`# net use Z: \\server\share password /user:name`,
		"run /c net use \\\\srv\\share "+pw,
	)
}

// TestPrompts: a command after the prompt a shell prints before it starts
// there, whatever the shell; a # or > alone, or after prose, is a
// heading, a quote, C# or an arrow, and starts none.
func TestPrompts(t *testing.T) {
	pw := fakecred.New(40).Str(fakecred.Alnum, 9) + "!q7Z"
	var cases []contextCase
	for _, p := range []struct{ name, before, after string }{
		{"bash's", "alice@box:~/src$ ", ""},
		{"root's, sudo", "root@box:~# sudo ", ""},
		{"RHEL's root", "[root@box ~]# ", ""},
		{"openSUSE's root", "box:~ # ", ""},
		{"a virtualenv's", "(venv) root@box:~# ", ""},
		{"bash's bare", "bash-5.1# ", ""},
		{"zsh's, sudo", "% sudo ", ""},
		{"zsh's default", "mac% ", ""},
		{"macOS's", "alice@mac ~ % ", ""},
		{"a path ending in a digit, %", "alice@box:~/proj1% ", ""},
		{"a path, %", "alice@box:~/src% ", ""},
		{"fish's", "alice@box ~> ", ""},
		{"starship's, sudo", "❯ sudo ", ""},
		{"a path, ❯", "~/src ❯ ", ""},
		{"a JSON string's", `{"output": "done\n% `, `"}`},
		{"a JSON string's root", `{"output": "done\nroot@box:~# `, `"}`},
	} {
		cmd := func(v string) string { return p.before + "zip -P " + v + " a.zip f" + p.after }
		cases = append(cases, contextCase{"after " + p.name + " prompt", cmd(pw), cmd(R("password"))})
	}
	runContextCases(t, cases)
	keptAsIs(t,
		"# zip -P flag",
		"> zip -P is insecure",
		"# ssh-keygen -N and -P",
		"<li>zip -P flag sets a password</li>",
		"Progress: 100% zip -P later",
		"C# zip -P wrapper",
		"-> zip -P flag",
		"=> zip -P flag",
		"dev@x.com -> zip -P flag",
		"@bob C# zip -P wrapper works",
		"**alice@x.com** > zip -P is weak",
		"alice@corp.com: C# zip -P wrapper",
		"PS the C# zip -P wrapper is old",
		"PS > zip -P flag is weak",
		"bash-5 # zip -P is weak",
		"Settings ❯ Security ❯ zip -P is weak",
		"- ❯ zip -P is weak",
		"French: 50 % zip -P est faible",
		"a% zip -P is weak",
	)
}

// TestKeyAndArchivePassphrases: ssh-keygen's -N (the new passphrase) and
// -P (the old), zip's and unzip's -P and 7z's attached -p take one
// however short; an empty one, a reference and 7z's -p alone (it asks)
// are none.
func TestKeyAndArchivePassphrases(t *testing.T) {
	pw := fakecred.New(38).Str(fakecred.Alnum, 9) + "!q7Z"
	P, PP := R("password"), R("passphrase")
	runContextCases(t, []contextCase{
		{"ssh-keygen -N", "ssh-keygen -t ed25519 -N '" + pw + "' -f ~/.ssh/id_deploy", "ssh-keygen -t ed25519 -N '" + PP + "' -f ~/.ssh/id_deploy"},
		{"ssh-keygen -N, a word", "ssh-keygen -q -t rsa -b 4096 -N hunter2 -f key", "ssh-keygen -q -t rsa -b 4096 -N " + PP + " -f key"},
		{"ssh-keygen -p -P -N", `ssh-keygen -p -P "old phrase" -N "` + pw + `" -f key`, `ssh-keygen -p -P "` + PP + `" -N "` + PP + `" -f key`},
		{"ssh-keygen -y -P", "ssh-keygen -y -P " + pw + " -f key > key.pub", "ssh-keygen -y -P " + PP + " -f key > key.pub"},
		{"zip -P", "zip -P " + pw + " out.zip report.pdf", "zip -P " + P + " out.zip report.pdf"},
		{"zip -r -P", "cd dist && zip -r -P '" + pw + "' ../out.zip .", "cd dist && zip -r -P '" + P + "' ../out.zip ."},
		{"zip --password", "zip --password " + pw + " out.zip f", "zip --password " + P + " out.zip f"},
		{"unzip -P", "unzip -P " + pw + " a.zip -d out", "unzip -P " + P + " a.zip -d out"},
		{"unzip -o -P short", "unzip -o -P abc a.zip", "unzip -o -P " + P + " a.zip"},
		{"7z a -p", "7z a -p" + pw + " -mhe=on out.7z f", "7z a -p" + P + " -mhe=on out.7z f"},
		{"7z x -p quoted", `7z x -p"my long phrase" a.7z -oout`, `7z x -p"` + P + `" a.7z -oout`},
		{"7za x -p", "7za x -p" + pw + " a.7z", "7za x -p" + P + " a.7z"},
		{"zip, -P after the archive", "zip out.zip -P " + pw + " report.pdf", "zip out.zip -P " + P + " report.pdf"},
		{"zip, continued", "zip \\\n  -r -P " + pw + " out.zip dir", "zip \\\n  -r -P " + P + " out.zip dir"},
		{"ssh-keygen, continued", "ssh-keygen \\\n  -t ed25519 -N " + pw + " -f key", "ssh-keygen \\\n  -t ed25519 -N " + PP + " -f key"},
		{"zip, a variable's archive", "zip $ARCHIVE -P " + pw + " dir", "zip $ARCHIVE -P " + P + " dir"},
		{"zip, an archive of accents", "zip été.zip -P " + pw + " f", "zip été.zip -P " + P + " f"},
		{"zip, blanks", "zip      -P " + pw + " a.zip", "zip      -P " + P + " a.zip"},
		{"a quoted archive named as prose", `zip "file" -P ` + pw, `zip "file" -P ` + P},
		{"an archive of punctuation", "zip ... -P " + pw, "zip ... -P " + P},
		{"zip, a quoted archive", `zip "my archive.zip" -P ` + pw + ` f`, `zip "my archive.zip" -P ` + P + ` f`},
		{"zip, an archive without .zip", "zip backup -P " + pw + " notes.txt", "zip backup -P " + P + " notes.txt"},
		{"zip -rP", "zip -rP " + pw + " out.zip dir", "zip -rP " + P + " out.zip dir"},
		{"zip -9erP", "zip -9rP hunter2 out.zip dir", "zip -9rP " + P + " out.zip dir"},
		{"unzip -oP", "unzip -oP " + pw + " a.zip", "unzip -oP " + P + " a.zip"},
		{"unzip, -P after the archive", "unzip a.zip -P " + pw, "unzip a.zip -P " + P},
		{"ssh-keygen -qN", "ssh-keygen -qN " + pw + " -f key", "ssh-keygen -qN " + PP + " -f key"},
		{"a Makefile recipe in JSON", `{"content":"dist:\n\tzip -P ` + pw + ` dist.zip build\n"}`, `{"content":"dist:\n\tzip -P ` + P + ` dist.zip build\n"}`},
		{"after then", "if [ -f a ]; then zip -P hunter2 a.zip a; fi", "if [ -f a ]; then zip -P " + P + " a.zip a; fi"},
		{"after sudo, after xargs", "find . -name '*.log' | xargs zip -P abc logs.zip && sudo unzip -P xyz b.zip",
			"find . -name '*.log' | xargs zip -P " + P + " logs.zip && sudo unzip -P " + P + " b.zip"},
	})
	keptAsIs(t,
		"ssh-keygen -t ed25519 -N '' -f ~/.ssh/id_ed25519",
		`ssh-keygen -t rsa -N "" -f key`,
		`ssh-keygen -N "$PASSPHRASE" -f key`,
		"ssh-keygen -N <passphrase> -f key",
		"ssh-keygen -p -f ~/.ssh/id_rsa",
		"ssh-keygen -R github.com",
		"ssh-keygen -l -f key.pub -E md5",
		"zip -r out.zip dir",
		"zip -e out.zip f",
		"gzip -P x",
		"unzip -p a.zip f.txt",
		"unzip -P \"$ZIP_PASSWORD\" a.zip",
		"7z x -p a.7z",
		"7z x a.7z -p",
		"7z l -slt a.7z",
		"7z a -pyour_password out.7z f",
		"mkdir -p build && cp -P a b",
		"the zip -P flag is weak encryption",
		"zip -Pr out.zip dir",
		"zip -r out.zip dir -x '*.git*'",
		"zip -rq out.zip dir",
		"Zip the folder, then unzip it with -P and the password",
		"zip -eP",
		`ssh web1 "zip -qr /tmp/site.zip /var/www"; scp -P 2222 "web1:/tmp/site.zip" .`,
		`{"command":"ssh web1 \"zip -qr /tmp/site.zip /var/www\" && scp -P 2222 web1:/tmp/site.zip ."}`,
		`bash -c "unzip -o a.zip" && scp -P 2022 "b" c`,
		"zip the folder with -P and a password",
		"(zip files made with -P are weakly encrypted)",
		"zip archives support -P passwords, but weakly",
		"zip it up with -P and the password",
		"zip them with -P and a password",
		"zip it, with -P and the password",
		"zip (the folder) with -P and a password",
		"zip **the** folder with -P and a password",
		"hello world "+strings.Repeat("x/", 70)+"# zip -P and a password",
	)
}
