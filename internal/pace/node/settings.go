package node

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// readSettingsFile reads a flat YAML settings file and returns it as --name=value arguments.
// The accepted subset is what a node's settings need and nothing more: `name: value` lines,
// `name:` followed by `- item` lines for repeatable settings, `#` comments, values optionally
// in single or double quotes. Names use '_' for the flag's '-'. A name written twice, or any
// other YAML construct, is refused with its line number: a settings file that does not say
// exactly one thing is not guessed at.
func readSettingsFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	defer f.Close()
	p := settingsParser{path: path, seen: map[string]bool{}}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if err := p.line(n, sc.Text()); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	return p.args, p.finishList()
}

type settingsParser struct {
	path string
	seen map[string]bool
	args []string
	list string // the name whose "- item" lines are being read
	n    int    // items read for list
}

func (p *settingsParser) errorf(n int, format string, a ...any) error {
	return fmt.Errorf("--config %s:%d: "+format, append([]any{p.path, n}, a...)...)
}

func (p *settingsParser) line(n int, raw string) error {
	text := strings.TrimRight(stripComment(raw), " \t\r")
	if strings.TrimSpace(text) == "" || text == "---" {
		return nil
	}
	if item, ok := strings.CutPrefix(strings.TrimLeft(text, " "), "- "); ok && strings.HasPrefix(text, " ") {
		if p.list == "" {
			return p.errorf(n, "a list item outside a list")
		}
		p.n++
		p.args = append(p.args, "--"+p.list+"="+unquote(strings.TrimSpace(item)))
		return nil
	}
	if err := p.finishList(); err != nil {
		return err
	}
	name, val, ok := strings.Cut(text, ":")
	if !ok || strings.ContainsAny(name, " \t\"'") || name == "" {
		return p.errorf(n, "want `name: value` (flat settings only)")
	}
	flagName := strings.ReplaceAll(name, "_", "-")
	if p.seen[flagName] {
		return p.errorf(n, "%s is written twice", name)
	}
	p.seen[flagName] = true
	if val = strings.TrimSpace(val); val == "" {
		p.list, p.n = flagName, 0
		return nil
	}
	p.args = append(p.args, "--"+flagName+"="+unquote(val))
	return nil
}

func (p *settingsParser) finishList() error {
	if p.list != "" && p.n == 0 {
		return fmt.Errorf("--config %s: %s has no value", p.path, p.list)
	}
	p.list = ""
	return nil
}

// stripComment drops a # comment that is not inside quotes.
func stripComment(s string) string {
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i]
		}
	}
	return s
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}
