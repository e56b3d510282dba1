package index

import (
	"cmp"
	"slices"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Folding makes one form of the ways a word is written, at index time and
// at query time alike (fold.appendFold for a rune, fold.appendFoldUnit for
// a character with its combining marks):
//
//   - as unicode61 with remove_diacritics 2: lower case, the diacritics of
//     Latin letters dropped (foldTable);
//   - Greek letters without tonos and dialytika (greekFoldTable);
//   - the compatibility forms as NFKC makes them, folded the same way:
//     full-width and half-width forms, ligatures, circled and
//     superscript digits, Roman numerals (compatFoldTable);
//   - letters users type otherwise (extraFolds): ß is ss, œ oe, æ ae, the
//     Turkish dotless ı is i (İ is i by its lower case), the Latin letters
//     with a stroke lose it (đ ł ø ħ ŧ …), Russian ё is е; the joiners
//     (ZWJ, ZWNJ), variation selectors and emoji skin tones are dropped.
//
// A character with combining marks is composed first (NFC), so that text
// in NFD (as macOS writes it: Korean in conjoining jamo, kana with a
// separate voicing mark, e with a separate acute) folds as the same text
// precomposed.

// expanded marks in folds a rune whose fold is in expansions: more than
// one rune, or none beyond U+FFFF.
const expanded = 0xFFFF

// foldTo is what a rune folds to, when it is more than one rune or beyond
// U+FFFF.
type foldTo struct {
	r  rune
	to string
}

// extraFolds are bottled's folds beyond unicode61, NFKC and Greek (see
// above); "" drops the rune.
var extraFolds = [...]foldTo{
	{'ß', "ss"}, {'œ', "oe"}, {'æ', "ae"}, {'ǣ', "ae"}, {'ǽ', "ae"},
	{'ı', "i"},
	{'đ', "d"}, {'ł', "l"}, {'ø', "o"}, {'ǿ', "o"}, {'ħ', "h"}, {'ŧ', "t"},
	{'ƀ', "b"}, {'ƶ', "z"}, {'ǥ', "g"}, {'ɨ', "i"}, {'ʉ', "u"},
	{'ё', "е"},
	{0x200C, ""}, {0x200D, ""}, {0xFE0E, ""}, {0xFE0F, ""},
	{0x1F3FB, ""}, {0x1F3FC, ""}, {0x1F3FD, ""}, {0x1F3FE, ""}, {0x1F3FF, ""},
}

// folder folds runes by its tables.
type folder struct {
	// folds is what each rune up to U+FFFF folds to, every table in one,
	// so that a rune is looked up once (with a second look-up for Greek,
	// the look-ups took 17 % of the CPU profile of tokenizing Greek text,
	// against 12 % with one).
	folds      [][2]uint16
	expansions []foldTo // the folds to strings, by rune
	// pages[p] is where the runes of 256 from p<<8 start in folds, so that
	// a look-up searches their page alone: in one table of all the folds,
	// tokenizing Greek and Russian took a tenth longer.
	pages [257]uint16
}

// fold is bottled's fold: foldTable, greekFoldTable, extraFolds and
// compatFoldTable, merged in fold_merged.go (by TestMergedFolds), since
// merging them when the program starts took a millisecond.
var fold = paged(folder{folds: mergedFolds[:], expansions: mergedExpansions[:]})

// paged is fd with its pages.
func paged(fd folder) folder {
	p := 0
	for i, e := range fd.folds {
		for ; p <= int(e[0]>>8); p++ {
			fd.pages[p] = uint16(i)
		}
	}
	for ; p < len(fd.pages); p++ {
		fd.pages[p] = uint16(len(fd.folds))
	}
	return fd
}

// lookupFold is what a fold table (of runes up to U+FFFF) makes of r: a
// rune (expanded: see expansions), or -1 for one dropped; false if the
// table does not change it.
func lookupFold(table [][2]uint16, r rune) (rune, bool) {
	if r > 0xFFFF {
		return r, false
	}
	i, j := 0, len(table) // sort.Search, without a call per step
	for i < j {
		if h := int(uint(i+j) >> 1); rune(table[h][0]) < r {
			i = h + 1
		} else {
			j = h
		}
	}
	if i == len(table) || rune(table[i][0]) != r {
		return r, false
	}
	if to := table[i][1]; to != 0 {
		return rune(to), true
	}
	return -1, true
}

// unfolded reports whether r is among the common characters that fold to
// themselves (Han, Hangul syllables, kana), which need no look-up.
func unfolded(r rune) bool {
	return r >= 0x3041 && (r <= 0x3096 || r >= 0x30A1 && r <= 0x30FA || r == 0x30FC ||
		r >= 0x4E00 && r <= 0x9FFF || r >= 0xAC00 && r <= 0xD7A3)
}

// appendFold appends what r folds to to buf.
func (fd *folder) appendFold(buf []byte, r rune) []byte {
	buf, _ = fd.appendFolded(buf, r)
	return buf
}

// appendFolded appends what r folds to to buf, and reports whether that
// is other than r.
func (fd *folder) appendFolded(buf []byte, r rune) ([]byte, bool) {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			return append(buf, byte(r+'a'-'A')), true
		}
		return append(buf, byte(r)), false
	}
	if unfolded(r) {
		return utf8.AppendRune(buf, r), false
	}
	l := unicode.ToLower(r)
	if l > 0xFFFF {
		return fd.appendExpanded(buf, r, l)
	}
	f, ok := lookupFold(fd.folds[fd.pages[l>>8]:fd.pages[l>>8+1]], l)
	switch {
	case !ok:
		return utf8.AppendRune(buf, l), l != r
	case f < 0:
		return buf, true
	case f == expanded:
		return fd.appendExpanded(buf, r, l)
	}
	return utf8.AppendRune(buf, f), true
}

// appendExpanded appends what the lower-case l of r folds to by
// expansions.
func (fd *folder) appendExpanded(buf []byte, r, l rune) ([]byte, bool) {
	if i, ok := slices.BinarySearchFunc(fd.expansions, l, func(e foldTo, l rune) int { return cmp.Compare(e.r, l) }); ok {
		return append(buf, fd.expansions[i].to...), true
	}
	return utf8.AppendRune(buf, l), l != r
}

// appendFoldUnit appends what a character with its combining marks (unit)
// folds to to buf: composed first, so that NFD folds as NFC does, each
// rune folded, and composed again where the folds left a base and a mark
// that compose (half-width ｶﾞ is カ and U+3099, that is ガ).
func (fd *folder) appendFoldUnit(buf []byte, unit string) []byte {
	if !norm.NFC.IsNormalString(unit) {
		unit = norm.NFC.String(unit)
	}
	start := len(buf)
	for _, r := range unit {
		buf = fd.appendFold(buf, r)
	}
	if out := buf[start:]; utf8.RuneCount(out) > 1 && !norm.NFC.IsNormal(out) {
		buf = norm.NFC.Append(buf[:start], slices.Clone(out)...)
	}
	return buf
}
