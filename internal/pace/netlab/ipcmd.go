package netlab

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"os/exec"
	"strings"
)

// run runs prog with args, feeding it stdin, and returns its standard output. A failure carries
// the command line and the program's standard error, which is where ip and nft say what went
// wrong.
func run(stdin, prog string, args ...string) (string, error) {
	cmd := exec.Command(prog, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", prog, strings.Join(args, " "), err,
			strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// ip runs one ip command.
func ip(args ...string) error {
	_, err := run("", "ip", args...)
	return err
}

// ipJSON runs an ip command with -j and decodes its answer into v.
func ipJSON(v any, args ...string) error {
	out, err := run("", "ip", append([]string{"-j"}, args...)...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		return fmt.Errorf("ip -j %s: decoding %q: %w", strings.Join(args, " "), out, err)
	}
	return nil
}

// namespaces lists the lab namespaces that exist now, by reading the directory ip netns keeps
// them in (no directory: ip netns was never used here, so there are none).
func namespaces() ([]string, error) {
	entries, err := os.ReadDir(netnsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing network namespaces: %w", err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), nsPrefix) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// nsExists reports whether the namespace is there.
func nsExists(ns string) bool {
	_, err := os.Stat(netnsDir + "/" + ns)
	return err == nil
}

// bridgeSubnet reads the subnet a lab recorded in its bridge's alias.
func bridgeSubnet(brNS string) (netip.Prefix, error) {
	var links []struct {
		Alias string `json:"ifalias"`
	}
	if err := ipJSON(&links, "-n", brNS, "link", "show", bridgeDev); err != nil {
		return netip.Prefix{}, err
	}
	if len(links) != 1 {
		return netip.Prefix{}, fmt.Errorf("%s: no %s", brNS, bridgeDev)
	}
	p, err := netip.ParsePrefix(links[0].Alias)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%s: the bridge's alias is not a subnet: %w", brNS, err)
	}
	return p, nil
}

// hostAddress reads the IPv4 address of a host namespace's eth0.
func hostAddress(ns string) (netip.Addr, error) {
	var links []struct {
		Addrs []struct {
			Local string `json:"local"`
		} `json:"addr_info"`
	}
	if err := ipJSON(&links, "-n", ns, "-4", "addr", "show", "dev", hostDev); err != nil {
		return netip.Addr{}, err
	}
	if len(links) != 1 || len(links[0].Addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("%s: %s has no IPv4 address", ns, hostDev)
	}
	a, err := netip.ParseAddr(links[0].Addrs[0].Local)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%s: %w", ns, err)
	}
	return a, nil
}
