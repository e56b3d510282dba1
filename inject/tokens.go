package inject

// lineTokens estimates, on the high side, how many tokens one bottle line
// costs in a Read result. The Read tool's cap is counted by the API's
// tokenizer, which bottled cannot run, and a characters-per-token ratio
// that fits English prose undercounts code, logs and non-Latin text
// several times over. So the estimate follows how such tokenizers split
// text, each rule rounded up: a run of ASCII letters costs one token per
// three letters, a run of digits one per two, every other ASCII symbol a
// token, a run of spaces one per four, each non-ASCII character two (three
// outside the Basic Multilingual Plane, as emoji are), and each line four
// for the number and tab the Read tool puts in front of it. No line
// estimates below a token per four bytes.
func lineTokens(line []byte) int {
	n := 4
	for i := 0; i < len(line); {
		c := line[i]
		j := i + 1
		switch byteClass[c] {
		case classLetter:
			for j < len(line) && byteClass[line[j]] == classLetter {
				j++
			}
			n += (j - i + 2) / 3
		case classDigit:
			for j < len(line) && byteClass[line[j]] == classDigit {
				j++
			}
			n += (j - i + 1) / 2
		case classSpace:
			for j < len(line) && line[j] == ' ' {
				j++
			}
			n += (j - i + 3) / 4
		case classLead: // the first byte of a non-ASCII character
			n += 2
		case classLead4: // ... of one outside the Basic Multilingual Plane
			n += 3
		case classCont: // the rest of a non-ASCII character
		default: // an ASCII symbol or control
			n++
		}
		i = j
	}
	return n
}

// Byte classes for lineTokens.
const (
	classSymbol = iota
	classLetter
	classDigit
	classSpace
	classLead
	classLead4
	classCont
)

var byteClass = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			t[c] = classLetter
		case c >= '0' && c <= '9':
			t[c] = classDigit
		case c == ' ':
			t[c] = classSpace
		case c >= 0xF0:
			t[c] = classLead4
		case c >= 0xC0:
			t[c] = classLead
		case c >= 0x80:
			t[c] = classCont
		}
	}
	return t
}()
