package binflags

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// How the binaries and bottled's commands tell a mistake in their flags:
// in bottled's words, with the flags spelled as bottled's help spells them
// (--data-dir, -o), never in the words of Go's flag package ("flag
// provided but not defined: -bogus"), which urfave/cli copies for
// bottled's commands. Both return them as plain strings, so they are
// recognised here by their wording, the one place that knows it; one
// worded otherwise is passed on as it is.
const (
	flagUnknown      = "flag provided but not defined: -"
	flagNeedsValue   = "flag needs an argument: " // -name (urfave/cli: --name too)
	flagInvalid      = "invalid value "
	flagInvalidBool  = "invalid boolean value "
	flagInvalidFlags = "bad flag syntax: "
)

// Reword is a flag parser's error msg in bottled's words; kind says in
// words what a value of the flag called name is (WholeNumber…).
func Reword(msg string, kind func(name string) string) string {
	var value, name string
	switch {
	case strings.HasPrefix(msg, flagUnknown):
		return "unknown flag " + Dashed(strings.TrimPrefix(msg, flagUnknown))
	case strings.HasPrefix(msg, flagNeedsValue):
		name = strings.TrimLeft(strings.TrimPrefix(msg, flagNeedsValue), "-")
		return Dashed(name) + " needs " + kind(name)
	case strings.HasPrefix(msg, flagInvalidFlags):
		return fmt.Sprintf("%q is no flag: put it after -- to give it as an argument", strings.TrimPrefix(msg, flagInvalidFlags))
	case strings.HasPrefix(msg, flagInvalid):
		// invalid value "VALUE" for flag -NAME: REASON
		if _, err := fmt.Sscanf(strings.TrimPrefix(msg, flagInvalid), "%q for flag -%s", &value, &name); err != nil {
			return msg
		}
	case strings.HasPrefix(msg, flagInvalidBool):
		// invalid boolean value "VALUE" for -NAME: REASON
		if _, err := fmt.Sscanf(strings.TrimPrefix(msg, flagInvalidBool), "%q for -%s", &value, &name); err != nil {
			return msg
		}
	default:
		return msg
	}
	name = strings.TrimSuffix(name, ":")
	return fmt.Sprintf("%s takes %s, not %q", Dashed(name), kind(name), value)
}

// Dashed is a flag's name as bottled's help spells it: -o, --data-dir.
func Dashed(name string) string {
	if len([]rune(name)) == 1 {
		return "-" + name
	}
	return "--" + name
}

// What a flag's value is, in the words a bad one is told in.
const (
	WholeNumber = "a whole number"
	Duration    = "a duration such as 1.5s, 30s or 5m"
	Boolean     = "true or false"
	AnyValue    = "a value"
)

// valueKind says in words what a value of fs's flag name is.
func valueKind(fs *flag.FlagSet, name string) string {
	f := fs.Lookup(name)
	if f == nil {
		return AnyValue
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return Boolean
	}
	switch kind, _ := flag.UnquoteUsage(f); kind {
	case "int", "uint":
		return WholeNumber
	case "duration":
		return Duration
	}
	return AnyValue
}

// printFlags lists fs's flags as bottled's help lists its own: the name
// dashed, what it takes, what it is for and its default, aligned.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	var heads, texts []string
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		head := Dashed(f.Name)
		if kind != "" {
			head += " " + kind
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			usage += fmt.Sprintf(" (default: %q)", f.DefValue)
		}
		heads, texts = append(heads, head), append(texts, usage)
	})
	heads, texts = append(heads, "--help, -h"), append(texts, "show help")
	width := 0
	for _, h := range heads {
		width = max(width, len(h))
	}
	fmt.Fprintln(w, "OPTIONS:")
	for i, h := range heads {
		fmt.Fprintf(w, "   %-*s  %s\n", width, h, texts[i])
	}
}
