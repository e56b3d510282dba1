package fakecred

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Unredacted makes of a bottle the one a bottled from before redaction
// would have written of the same sources: every redacted form of c (its
// Want) is c's text again, and the state line has no "redact" field. Its
// byte count is made right again, not its line count or line numbers: a
// credential of several lines (a private key block) makes them wrong.
func Unredacted(bottle []byte, c Credential) ([]byte, error) {
	lines := bytes.SplitN(bottle, []byte("\n"), 5)
	if len(lines) < 5 || !bytes.HasPrefix(lines[3], []byte("<!-- bottled-state ")) {
		return nil, fmt.Errorf("not a bottle: no state line")
	}
	body := bytes.ReplaceAll(lines[4], []byte(c.Want), []byte(c.Text))
	head := bytes.Join(lines[:3], []byte("\n"))
	js := bytes.TrimSuffix(bytes.TrimPrefix(lines[3], []byte("<!-- bottled-state ")), []byte(" -->"))
	var st map[string]json.RawMessage
	if err := json.Unmarshal(js, &st); err != nil {
		return nil, err
	}
	delete(st, "redact")
	if task, ok := st["task"]; ok {
		st["task"] = bytes.ReplaceAll(task, []byte(c.Want), []byte(c.Text))
	}
	size := len(bottle)
	for range 8 {
		st["bytes"] = json.RawMessage(strconv.Itoa(size))
		sl, err := json.Marshal(st)
		if err != nil {
			return nil, err
		}
		out := bytes.Join([][]byte{head, append(append([]byte("<!-- bottled-state "), sl...), " -->"...), body}, []byte("\n"))
		if len(out) == size {
			return out, nil
		}
		size = len(out)
	}
	return nil, fmt.Errorf("bottle size did not settle")
}
