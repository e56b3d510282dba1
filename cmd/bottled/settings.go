package main

import (
	"strings"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/inject"
)

// access is the read permission for this data directory's bottles.
func (s *setup) access() inject.ReadAccess {
	return accessFor(s.agent.DataDir, s.agent.Home)
}

func accessFor(dataDir, home string) inject.ReadAccess {
	return inject.ReadAccess{Dir: bottles.BottlesDir(dataDir), Home: home}
}

// registeredAccesses are the read permissions for the bottles of the data
// directories that the hooks registered in settings b name: this one's, or
// an earlier install's for another.
func (s *setup) registeredAccesses(b []byte) []inject.ReadAccess {
	var accesses []inject.ReadAccess
	for _, d := range inject.RegisteredDataDirs(b) {
		accesses = append(accesses, accessFor(d, s.agent.Home))
	}
	return accesses
}

// checkSettings refuses a settings file bottled would not edit, before
// install or uninstall changes anything.
func (s *setup) checkSettings() error {
	_, err := inject.EditSettings(s.ctx, s.settings, true, func(b []byte) ([]byte, bool, error) {
		return b, false, inject.ValidSettings(b)
	})
	return s.settingsError(err)
}

// settingsError is err, or, when Ctrl-C stopped the edit (it stops only
// before the file is replaced), that the file is as it was.
func (s *setup) settingsError(err error) error {
	if stopped(s.ctx, err) {
		return interrupted(s.ctx, "while reading %s, which bottled left unchanged", s.settings)
	}
	return err
}

// editSettings edits settings.json (with --dry-run, only works the edit
// out) and says so when the file is a symbolic link: the file it points
// to is what bottled edits.
func (s *setup) editSettings(edit func(b []byte) ([]byte, bool, error)) error {
	res, err := inject.EditSettings(s.ctx, s.settings, s.dryRun, edit)
	if err != nil {
		return s.settingsError(err)
	}
	if res.File != s.settings {
		s.say("settings: %s is a symbolic link to %s; bottled %s that file and keeps the link", s.settings, res.File, s.verb("edits", "would edit"))
	}
	return nil
}

// installSettings registers the hooks (telling the SessionStart hook
// about the MCP tools when mcp says the server is registered) and lets
// Claude Code read the bottles and use the tools, in one edit of
// settings.json (one backup, one write). A grant that an earlier install
// made for another data directory goes with that install's hooks.
func (s *setup) installSettings(mcp bool) error {
	var hooks, read, tools bool
	var grant inject.Grant
	err := s.editSettings(func(b []byte) ([]byte, bool, error) {
		olds := s.registeredAccesses(b) // GrantRead keeps this data directory's
		out, changed, err := inject.RegisterHooks(b, inject.Registration{Command: s.command, MCPTools: mcp})
		if err != nil {
			return nil, false, err
		}
		hooks = changed
		if out, read, grant, err = inject.GrantRead(out, s.access(), olds); err != nil {
			return nil, false, err
		}
		out, tools, err = inject.GrantMCPTools(out)
		return out, hooks || read || tools, err
	})
	if err != nil {
		return err
	}
	if hooks {
		s.say("hooks: %s SessionStart (compact|resume) and SessionEnd (clear) in %s", s.verb("registered", "would register"), s.settings)
	} else {
		s.say("hooks: already registered in %s", s.settings)
	}
	verb := "already lets"
	if read {
		verb = s.verb("now lets", "would let")
	}
	switch grant.How {
	case "rule":
		s.say("read access: %s %s Claude Code read the bottles without asking, by the rule %s in permissions.allow", s.settings, verb, grant.Entry)
	default:
		s.say("read access: %s; so %s %s Claude Code read the bottles through %s in permissions.additionalDirectories. "+
			"That makes the bottles directory a working directory of every session (wider than a Read rule: the model may also edit there when edits are allowed)",
			grant.Why, s.settings, verb, grant.Entry)
	}
	if tools {
		s.say("mcp tools: permissions.allow %s the model use %s without asking", s.verb("now lets", "would let"), strings.Join(inject.MCPTools, ", "))
	}
	return nil
}

// uninstallSettings removes the hooks and the read grants install added,
// for the data directories the hooks named and this one.
func (s *setup) uninstallSettings() error {
	var hooks, read bool
	err := s.editSettings(func(b []byte) ([]byte, bool, error) {
		accesses := append([]inject.ReadAccess{s.access()}, s.registeredAccesses(b)...)
		out, changed, err := inject.UnregisterHooks(b)
		if err != nil {
			return nil, false, err
		}
		hooks = changed
		for _, a := range accesses {
			var revoked bool
			if out, revoked, err = inject.RevokeRead(out, a); err != nil {
				return nil, false, err
			}
			read = read || revoked
		}
		var revoked bool
		if out, revoked, err = inject.RevokeMCPTools(out); err != nil {
			return nil, false, err
		}
		read = read || revoked
		return out, hooks || read, nil
	})
	if err != nil {
		return err
	}
	if hooks {
		s.say("hooks: %s %s", s.verb("removed from", "would remove from"), s.settings)
	} else {
		s.say("hooks: none registered in %s", s.settings)
	}
	if read {
		s.say("permissions: %s bottled's grants from %s", s.verb("removed", "would remove"), s.settings)
	}
	return nil
}
