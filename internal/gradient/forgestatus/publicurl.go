package forgestatus

import (
	"fmt"
	"net"
	"net/url"
)

// CheckPublicURL admits "" (statuses carry no link) or an absolute http(s) URL.
func CheckPublicURL(s string) error {
	if s == "" {
		return nil
	}
	if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return fmt.Errorf("--public-url %q: want http(s)://host[:port][/path]", s)
	}
	return nil
}

// PublicURL is --public-url, else the bound listen address unless that is every interface
// (a link to 0.0.0.0 would lead nowhere).
func PublicURL(flagValue string, bound net.Addr) string {
	if flagValue != "" {
		return flagValue
	}
	if tcp, ok := bound.(*net.TCPAddr); ok && !tcp.IP.IsUnspecified() {
		return "http://" + tcp.String()
	}
	return ""
}
