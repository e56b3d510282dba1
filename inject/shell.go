package inject

import "strings"

// Quoting and splitting the command lines bottled registers as hooks.

// ShellQuote quotes a word for a POSIX shell (the one Claude Code runs
// hook commands with, or the user's, for a command bottled suggests),
// leaving plain words as they are.
func ShellQuote(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@%+,") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// shellSplit undoes ShellQuote (single quotes and plain words; enough to
// recognise a command bottled wrote).
func shellSplit(s string) []string {
	var words []string
	var cur strings.Builder
	in, any := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			in, any = !in, true
		case !in && (c == ' ' || c == '\t'):
			if any {
				words = append(words, cur.String())
				cur.Reset()
				any = false
			}
		case !in && c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			any = true
		default:
			cur.WriteByte(c)
			any = true
		}
	}
	if any {
		words = append(words, cur.String())
	}
	return words
}
