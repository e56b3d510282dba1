package index

import (
	"math/rand"
	"strings"
	"unicode/utf8"
)

// The search benchmark's corpus holds sessions written in Chinese,
// Japanese and Korean as well as English: a large share of real users
// write in them (several of the real transcripts are Chinese, one
// Korean). Their text is drawn as it is written: Chinese and Japanese
// without spaces between words, Korean with its particles attached to
// each word, and English words and identifiers mixed in, as people write
// about code.

// language draws the text of one of those languages.
type language struct {
	name  string
	vocab []string // by frequency, most frequent first
	zipf  *rand.Zipf
	// sentence writes one sentence of the language to b.
	sentence func(l *language, w *words, b *strings.Builder)
}

// languageOf is the language of the corpus's session i: nil (English) for
// five in six, then Chinese for one in twelve, Japanese and Korean for one
// in twenty-four each, spread over every project.
func (w *words) languageOf(i int) *language {
	w.initLanguages()
	switch i % 24 {
	case 1, 13:
		return w.langs[0]
	case 7:
		return w.langs[1]
	case 19:
		return w.langs[2]
	}
	return nil
}

// initLanguages draws the vocabularies of Chinese, Japanese and Korean,
// once, from the words' own random source.
func (w *words) initLanguages() {
	if w.langs != nil {
		return
	}
	rng := rand.New(rand.NewSource(3))
	han := distinctRunes(rng, 3500, 0x4E00, 0x9FA5)
	hanZipf := rand.NewZipf(rng, 1.05, 8, uint64(len(han)-1))
	hanWord := func(n int) string {
		r := make([]rune, n)
		for i := range r {
			r[i] = han[hanZipf.Uint64()]
		}
		return string(r)
	}
	zh := vocabulary(rng, 40_000, func() string {
		switch p := rng.Intn(100); {
		case p < 10:
			return hanWord(1)
		case p < 80:
			return hanWord(2)
		case p < 93:
			return hanWord(3)
		default:
			return hanWord(4)
		}
	})
	kana := func(from, to rune, n int) string {
		r := make([]rune, n)
		for i := range r {
			r[i] = from + rune(rng.Intn(int(to-from)))
		}
		return string(r)
	}
	ja := vocabulary(rng, 30_000, func() string {
		switch p := rng.Intn(100); {
		case p < 60:
			return hanWord(1 + rng.Intn(3))
		case p < 85:
			k := kana(0x30A1, 0x30F3, 2+rng.Intn(5))
			if rng.Intn(3) == 0 {
				k += "ー"
			}
			return k
		default:
			return kana(0x3041, 0x3093, 2+rng.Intn(3))
		}
	})
	syllables := distinctRunes(rng, 1200, 0xAC00, 0xD7A3)
	sylZipf := rand.NewZipf(rng, 1.05, 8, uint64(len(syllables)-1))
	ko := vocabulary(rng, 25_000, func() string {
		r := make([]rune, 1+rng.Intn(2)+rng.Intn(2))
		for i := range r {
			r[i] = syllables[sylZipf.Uint64()]
		}
		return string(r)
	})
	mk := func(name string, vocab []string, sentence func(*language, *words, *strings.Builder)) *language {
		return &language{name: name, vocab: vocab, zipf: rand.NewZipf(w.rng, 1.07, 2, uint64(len(vocab)-1)), sentence: sentence}
	}
	w.langs = []*language{mk("zh", zh, chineseSentence), mk("ja", ja, japaneseSentence), mk("ko", ko, koreanSentence)}
}

// distinctRunes draws n distinct runes from [lo, hi].
func distinctRunes(rng *rand.Rand, n int, lo, hi rune) []rune {
	seen := map[rune]bool{}
	out := make([]rune, 0, n)
	for len(out) < n {
		r := lo + rune(rng.Intn(int(hi-lo+1)))
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// vocabulary draws n distinct words from draw.
func vocabulary(rng *rand.Rand, n int, draw func() string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, n)
	for len(out) < n {
		if w := draw(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

func (l *language) word() string { return l.vocab[l.zipf.Uint64()] }

// text writes about n bytes of the language's sentences.
func (l *language) text(n int, w *words) string {
	var b strings.Builder
	b.Grow(n + 64)
	for b.Len() < n {
		l.sentence(l, w, &b)
		b.WriteString("\n")
		if w.rng.Intn(6) == 0 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// english is the English word or identifier mixed into a sentence of
// another language, about one word in eight.
func english(w *words) (string, bool) {
	if w.rng.Intn(8) != 0 {
		return "", false
	}
	return w.vocab[w.zipf.Uint64()], true
}

// wordOrEnglish is a word of the language or, as english draws, an
// English one.
func (l *language) wordOrEnglish(w *words) string {
	if e, ok := english(w); ok {
		return e
	}
	return l.word()
}

func chineseSentence(l *language, w *words, b *strings.Builder) {
	for k := 6 + w.rng.Intn(15); k > 0; k-- {
		if e, ok := english(w); ok {
			if w.rng.Intn(2) == 0 {
				e = " " + e + " "
			}
			b.WriteString(e)
		} else {
			b.WriteString(l.word())
		}
		if k > 1 && w.rng.Intn(7) == 0 {
			b.WriteString("，")
		}
	}
	b.WriteString("。")
}

var (
	japaneseParticles = []string{"の", "は", "が", "を", "に", "で", "と", "も", "へ", "から"}
	japaneseEndings   = []string{"します。", "しました。", "です。", "でした。", "ます。", "している。"}
	koreanParticles   = []string{"은", "는", "이", "가", "을", "를", "에", "에서", "의", "로", "으로", "와", "과", "도", "만"}
	koreanEndings     = []string{"습니다.", "입니다.", "했습니다.", "해요.", "합니다.", "됩니다."}
)

func japaneseSentence(l *language, w *words, b *strings.Builder) {
	for k := 3 + w.rng.Intn(6); k > 0; k-- {
		b.WriteString(l.wordOrEnglish(w))
		b.WriteString(japaneseParticles[w.rng.Intn(len(japaneseParticles))])
		if w.rng.Intn(6) == 0 {
			b.WriteString("、")
		}
	}
	b.WriteString(l.word())
	b.WriteString(japaneseEndings[w.rng.Intn(len(japaneseEndings))])
}

func koreanSentence(l *language, w *words, b *strings.Builder) {
	for k := 4 + w.rng.Intn(9); k > 0; k-- {
		b.WriteString(l.wordOrEnglish(w))
		if w.rng.Intn(10) < 7 {
			b.WriteString(koreanParticles[w.rng.Intn(len(koreanParticles))])
		}
		b.WriteByte(' ')
	}
	b.WriteString(l.word())
	b.WriteString(koreanEndings[w.rng.Intn(len(koreanEndings))])
}

// cjkQuery draws the i-th CJK query of the benchmark's mix: words of each
// language at every frequency (a Korean word without the particles the
// text attaches to it), a run of characters cut from inside a Chinese
// sentence, and now and then a single character.
func (w *words) cjkQuery(i int, rng *rand.Rand) string {
	w.initLanguages()
	zh, ja, ko := w.langs[0], w.langs[1], w.langs[2]
	pick := func(l *language, lo, hi int) string { return l.vocab[lo+rng.Intn(hi-lo)] }
	// The frequency bands words are drawn from, by rank: common, middling
	// and rare Chinese words, then Japanese, then common and rare Korean.
	bands := []struct {
		l      *language
		lo, hi int
	}{{zh, 10, 1000}, {zh, 1000, 20000}, {zh, 20000, len(zh.vocab)}, {ja, 10, 5000}, {ko, 10, 3000}, {ko, 3000, len(ko.vocab)}}
	switch k := i % 8; {
	case k < len(bands):
		return pick(bands[k].l, bands[k].lo, bands[k].hi)
	case k == 6: // four characters from inside a sentence
		var b strings.Builder
		for utf8.RuneCountInString(b.String()) < 12 {
			b.WriteString(zh.word())
		}
		r := []rune(b.String())
		k := rng.Intn(len(r) - 4)
		return string(r[k : k+4])
	default: // one character
		for {
			if r := []rune(pick(zh, 0, 300)); len(r) > 0 {
				return string(r[0])
			}
		}
	}
}
