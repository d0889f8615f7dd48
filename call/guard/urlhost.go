package guard

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"path"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// urlHost is the host a URL reaches, read as a browser reads it.
type urlHost struct {
	// name is the host judged: an IP address in its usual form (IPv4 for
	// an IPv4-mapped IPv6 address), else the name in lower-case ASCII
	// without trailing dots.
	name string
	// internal says what makes the host one of this machine's or its
	// network's ("a loopback address", ...), "" for any other host.
	internal string
}

// idnaHost maps a host that is not ASCII as Chromium does (UTS #46,
// non-transitional, no STD3 rules: an underscore is allowed), so that
// "１２７.０.０.１" is judged as 127.0.0.1.
var idnaHost = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.StrictDomainName(false), idna.BidiRule())

// hostOf reads the host of u as the WHATWG URL parser that browsers use
// does: url.Parse has percent-decoded it; a name not in ASCII is mapped by
// IDNA; one whose last label is a number is an IPv4 address in any of the
// spellings inet_aton takes (2130706433, 0x7f.1, 0177.0.0.1, 127.1). Names
// are not resolved: what a name's DNS answer is when the plugin connects
// is not what it was at the check, and asking DNS would send the model's
// host out before anyone approved it.
func hostOf(u *url.URL) (urlHost, error) {
	h := u.Hostname()
	if h == "" {
		return urlHost{}, errors.New("it names no host")
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return addrHost(a.WithZone("")), nil
	}
	if !isASCII(h) {
		m, err := idnaHost.ToASCII(h)
		if err != nil {
			return urlHost{}, fmt.Errorf("its host %q is not a valid name (%v)", h, err)
		}
		h = m
	}
	h = strings.TrimRight(strings.ToLower(h), ".")
	if h == "" {
		return urlHost{}, errors.New("it names no host")
	}
	if a, ok, err := parseIPv4(h); err != nil {
		return urlHost{}, fmt.Errorf("its host %q ends in a number but is no IPv4 address (%v)", u.Hostname(), err)
	} else if ok {
		return addrHost(a), nil
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		// RFC 6761: the browser answers these itself, with loopback.
		return urlHost{name: h, internal: "a loopback name"}, nil
	}
	return urlHost{name: h}, nil
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Ranges of this machine and its networks besides those netip names.
var (
	thisHost   = netip.MustParsePrefix("0.0.0.0/8")     // RFC 1122: connecting there reaches this machine
	sharedCGN  = netip.MustParsePrefix("100.64.0.0/10") // RFC 6598: carrier-grade NAT, private to a provider
	ipv4Compat = netip.MustParsePrefix("::/96")         // deprecated IPv4-compatible IPv6 (::127.0.0.1)
	nat64      = netip.MustParsePrefix("64:ff9b::/96")  // RFC 6052: the IPv4 address it embeds, through a NAT64
)

// addrHost judges an IP address: IPv4 inside IPv6 (mapped, compatible,
// NAT64) is judged as the IPv4 address it carries.
func addrHost(a netip.Addr) urlHost {
	a = a.Unmap()
	if a.Is6() && (ipv4Compat.Contains(a) && !a.IsLoopback() && !a.IsUnspecified() || nat64.Contains(a)) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	h := urlHost{name: a.String()}
	switch {
	case a.IsLoopback():
		h.internal = "a loopback address"
	case a.IsUnspecified() || thisHost.Contains(a):
		h.internal = "an address of this machine"
	case a.IsPrivate() || sharedCGN.Contains(a):
		h.internal = "a private network address"
	case a.IsLinkLocalUnicast():
		h.internal = "a link-local address"
	}
	return h
}

// parseIPv4 parses h as the WHATWG URL parser parses a host whose last
// label is a number: one to four parts, each decimal, octal (a leading 0)
// or hex (0x), the last filling the bytes left. ok is false for a name
// whose last label is no number; err says why one that is fails.
func parseIPv4(h string) (a netip.Addr, ok bool, err error) {
	parts := strings.Split(h, ".")
	if !isNumberLabel(parts[len(parts)-1]) {
		return netip.Addr{}, false, nil
	}
	if len(parts) > 4 {
		return netip.Addr{}, true, errors.New("more than four parts")
	}
	var v uint64
	for i, p := range parts {
		n, err := ipv4Part(p)
		if err != nil {
			return netip.Addr{}, true, err
		}
		last := i == len(parts)-1
		if !last && n > 255 || last && n >= 1<<(8*(5-len(parts))) {
			return netip.Addr{}, true, fmt.Errorf("part %q is out of range", p)
		}
		if last {
			v = v<<(8*(5-len(parts))) | n
		} else {
			v = v<<8 | n
		}
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

// isNumberLabel reports whether a label makes a host an IPv4 address to
// the WHATWG parser: digits alone, or 0x and hex digits.
func isNumberLabel(l string) bool {
	if l == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(strings.ToLower(l), "0x"); ok {
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return strings.Trim(l, "0123456789") == ""
}

func ipv4Part(p string) (uint64, error) {
	if p == "" {
		return 0, errors.New("an empty part")
	}
	base, digits := 10, p
	switch lp := strings.ToLower(p); {
	case strings.HasPrefix(lp, "0x"):
		base, digits = 16, lp[2:]
	case len(p) > 1 && p[0] == '0':
		base, digits = 8, p[1:]
	}
	if digits == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return 0, fmt.Errorf("part %q is not a number", p)
	}
	return n, nil
}

// grants reports whether the network.allow entry pat grants h: a host
// of this machine or its networks only by an entry naming it exactly
// (localhost, 127.0.0.1, [::1]), never by a glob; any other host by the
// entry as a glob over the name.
func grants(pat string, h urlHost) bool {
	p := strings.TrimRight(strings.ToLower(strings.TrimSpace(pat)), ".")
	if a, err := netip.ParseAddr(strings.Trim(p, "[]")); err == nil {
		p = addrHost(a.WithZone("")).name
	}
	if h.internal != "" {
		return p == h.name
	}
	ok, _ := path.Match(p, h.name)
	return ok
}
