package redact

import (
	"slices"
	"strconv"
	"strings"
)

// Version is the version of the built-in rules. It goes up with every
// change to them that can change what a string redacts to, so that
// bottles made by older rules are found by their [Rules.ID] and made again
// (and the search index purged of what they held). It also goes up with a
// change to render's tag stripper, whose work the same bottles hold: 2
// added prefixed and long private keys, long JWTs, values in any quotes
// or after a blank, and a private tag in any case; 3 added session
// cookies, keytool's, jarsigner's and openssl enc's password flags, Azure
// SAS signatures, Authorization credentials of any length and escaped
// tokens; 4 keeps a value after a blank that holds a quote or a backslash
// (only one that closes a JSON string is no secret) and a double-quoted
// value past an escaped quote; 5 added presigned URLs' signatures,
// openssl's raw keys and pass: passwords of any length, and private keys
// with base64's characters JSON-escaped; 6 added the key of an HMAC given
// to openssl (-hmac, -macopt key: and hexkey:); 7 added htpasswd -b's
// password, smbclient's -U user%password, ssh-keygen's -N and -P, zip's,
// unzip's and 7z's passwords, Stripe webhook secrets, Discord webhooks'
// tokens and Telegram bots' tokens; 8 read openssl's -k and the plain
// flags' values by one rule (htpasswd -b's "password", zip -P x), and
// added net use's password, zip -P after the archive and in a cluster
// (zip -rP), htpasswd across continued lines and with a cost in its
// flags, commands in scripts held in JSON and after a prompt, a short
// -psk and a SigV4 header a field a line.
const Version = 8

// Placeholder is what a credential of kind is replaced by.
func Placeholder(kind string) string { return "[redacted: " + kind + "]" }

// A Finding is a span of a string that holds a credential: s[Start:End]
// is replaced by the placeholder of Kind.
type Finding struct {
	Start, End int
	Kind       string
}

// rank orders the rules whose spans overlap: the most specific one names
// the union.
type rank uint8

const (
	format  rank = iota // a token format, a structure or a user's pattern
	context             // a secret known by what surrounds it
)

type found struct {
	Finding
	rank rank
}

// A matcher looks for a credential around hit, where one of its keywords
// starts in s, from from on. Beside what it found it returns where to look
// for another (a curl command can have several -u), or 0. (It returns one
// at a time, rather than appending to a slice, so that the slice of
// findings, passed to no function value, stays on the caller's stack.)
type matcher func(s string, hit, from int) (f found, next int, ok bool)

// one makes a matcher of a function that finds at most one credential.
func one(match func(s string, hit int) (found, bool)) matcher {
	return func(s string, hit, _ int) (found, int, bool) {
		f, ok := match(s, hit)
		return f, 0, ok
	}
}

// Rules is a compiled, immutable rule set, safe for concurrent use. A nil
// *Rules is the built-in rule set, so that forgetting to pass one never
// turns redaction off.
type Rules struct {
	user []userRule
	id   string
}

var builtin = &Rules{id: strconv.Itoa(Version)}

// Builtin returns bottled's own rules.
func Builtin() *Rules { return builtin }

// ID names the rule set in a bottle's state: the version of the built-in
// rules, and a hash of the user's patterns if there are any
// ("2", "2+3f9a0c2be417"). Rules that redact alike have the same ID.
func (r *Rules) ID() string {
	if r == nil {
		return builtin.id
	}
	return r.id
}

// UserPatterns is how many of the user's patterns the rules hold.
func (r *Rules) UserPatterns() int {
	if r == nil {
		return 0
	}
	return len(r.user)
}

// Redact returns s with every credential replaced by the placeholder of
// its kind. A string without a credential is returned as it is, without
// an allocation.
func (r *Rules) Redact(s string) string {
	var buf [8]found
	fs := merge(r.find(s, buf[:0]))
	if len(fs) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 24*len(fs))
	last := 0
	for _, f := range fs {
		b.WriteString(s[last:f.Start])
		b.WriteString("[redacted: ")
		b.WriteString(f.Kind)
		b.WriteByte(']')
		last = f.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// Find returns the spans Redact replaces, in order and disjoint; nil if
// there are none.
func (r *Rules) Find(s string) []Finding {
	var buf [8]found
	fs := merge(r.find(s, buf[:0]))
	if len(fs) == 0 {
		return nil
	}
	out := make([]Finding, len(fs))
	for i, f := range fs {
		out[i] = f.Finding
	}
	return out
}

// find appends to out what every rule finds in s, in no order, and
// the tokens that s holds escaped (see findEscaped).
func (r *Rules) find(s string, out []found) []found {
	out = findEscaped(s, findKeywords(s, out))
	if r != nil {
		for i := range r.user {
			out = r.user[i].find(s, out)
		}
	}
	return out
}

// findKeywords appends to out what the built-in rules find in s.
//
// The scan keeps the last three bytes it read, case folded, in one word
// and reads one new byte a position: it runs once over every byte of
// every rendered string, so its cost per byte is most of redaction's.
func findKeywords(s string, out []found) []found {
	if len(s) < 3 {
		return out
	}
	kw := &keywords
	window := uint32(lowerByte[s[0]])<<8 | uint32(lowerByte[s[1]])
	for j := 2; j < len(s); j++ {
		window = window<<8 | uint32(lowerByte[s[j]])
		if h := trigram(window); kw.tri[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		i := j - 2
		var next int
		if out, next = kw.matchAt(s, i, out); next == i {
			continue
		}
		// Go on at next+1, whose window ends at s[next+3].
		if j = next + 2; j >= len(s) {
			break
		}
		window = uint32(lowerByte[s[j-1]])<<8 | uint32(lowerByte[s[j]])
	}
	return out
}

// matchAt runs the matchers of every keyword that starts at s[i:],
// appending what they find to out. It returns out and the last position a
// later keyword may start from: past a token found at i, since nothing
// more is to be found inside it, else i itself.
func (kw *keywordSet) matchAt(s string, i int, out []found) (_ []found, next int) {
	next = i
	for _, w := range kw.first[lowerByte[s[i]]] {
		if !hasFoldPrefix(s[i:], kw.words[w]) {
			continue
		}
		for _, m := range kw.matchers[w] {
			for from := i; ; {
				f, more, ok := m(s, i, from)
				if ok {
					out = append(out, f)
					if f.rank == format && f.Start == i {
						next = max(next, f.End-1)
					}
				}
				if more <= from {
					break
				}
				from = more
			}
		}
	}
	return out, next
}

// merge sorts findings and joins those that overlap into their union,
// named by the most specific of them (the first, among equals).
func merge(fs []found) []found {
	if len(fs) < 2 {
		return fs
	}
	slices.SortFunc(fs, func(a, b found) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return b.End - a.End
	})
	n := 0
	for _, f := range fs {
		if n > 0 && f.Start < fs[n-1].End {
			cur := &fs[n-1]
			if f.rank < cur.rank {
				cur.Kind, cur.rank = f.Kind, f.rank
			}
			cur.End = max(cur.End, f.End)
			continue
		}
		fs[n] = f
		n++
	}
	return fs[:n]
}

// keywordSet finds every keyword of the built-in rules in one pass: a
// position is looked at further only if its three bytes, case folded,
// hash to a bit set by the start of some keyword. The set is 8 KiB, so it
// stays in the first-level cache; a two-byte filter let through common
// English pairs (as, se, pa) and cost twice as much.
type keywordSet struct {
	words    []string // lower case, at least three bytes
	matchers [][]matcher
	first    [256][]uint8    // keyword indices by first byte
	tri      [1 << 10]uint64 // bits of the trigram hashes of the keywords' starts
}

// trigram hashes the low three bytes of window to 16 bits.
func trigram(window uint32) uint32 {
	return (window & 0xFFFFFF) * 0x9E3779B1 >> 16
}

var keywords keywordSet

// register makes m run wherever word (matched case-insensitively) is.
func register(word string, m matcher) {
	k := &keywords
	word = strings.ToLower(word)
	for i, w := range k.words {
		if w == word {
			k.matchers[i] = append(k.matchers[i], m)
			return
		}
	}
	if len(word) < 3 || len(k.words) == 255 {
		panic("redact: bad keyword " + strconv.Quote(word))
	}
	k.words = append(k.words, word)
	k.matchers = append(k.matchers, []matcher{m})
	k.first[word[0]] = append(k.first[word[0]], uint8(len(k.words)-1))
	h := trigram(uint32(word[0])<<16 | uint32(word[1])<<8 | uint32(word[2]))
	k.tri[h>>6] |= 1 << (h & 63)
}

func hasFoldPrefix(s, word string) bool {
	if len(s) < len(word) {
		return false
	}
	for i := 0; i < len(word); i++ {
		if lowerByte[s[i]] != word[i] {
			return false
		}
	}
	return true
}

// indexFold is the first index of word (lower case) in s, matched
// case-insensitively, -1 if it is not there.
func indexFold(s, word string) int {
	for i := 0; i+len(word) <= len(s); i++ {
		if lowerByte[s[i]] == word[0] && hasFoldPrefix(s[i:], word) {
			return i
		}
	}
	return -1
}
