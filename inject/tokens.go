package inject

import "unicode/utf8"

// lineTokens estimates, on the high side, how many tokens one bottle line
// costs in a Read result. The Read tool's cap is counted by the API's
// tokenizer, which bottled cannot run, and a characters-per-token ratio
// that fits English prose undercounts code, logs and non-Latin text
// several times over. So the estimate follows how such tokenizers split
// text, each rule rounded up: a run of ASCII letters costs one token per
// three letters, a run of digits one per two, every other ASCII symbol a
// token, a run of spaces one per four, each non-ASCII character two (three
// outside the Basic Multilingual Plane, as emoji are), and each line four
// for the number and tab the Read tool puts in front of it.
func lineTokens(line []byte) int {
	n := 4
	for i := 0; i < len(line); {
		c := line[i]
		j := i + 1
		switch {
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(line[i:])
			n += 2
			if r > 0xFFFF {
				n++
			}
			j = i + size
		case isLetter(c):
			for j < len(line) && isLetter(line[j]) {
				j++
			}
			n += (j - i + 2) / 3
		case c >= '0' && c <= '9':
			for j < len(line) && line[j] >= '0' && line[j] <= '9' {
				j++
			}
			n += (j - i + 1) / 2
		case c == ' ':
			for j < len(line) && line[j] == ' ' {
				j++
			}
			n += (j - i + 3) / 4
		default:
			n++
		}
		i = j
	}
	return n
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
