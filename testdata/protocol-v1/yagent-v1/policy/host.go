package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// Host is a network host as the policy judges it: the host of a URL, of
// an HTTP CONNECT or of a SOCKS request, read as a browser reads a URL's.
type Host struct {
	// Name is an IP address in its usual form (IPv4 for an IPv4-mapped
	// IPv6 address), else the name in lower-case ASCII without trailing
	// dots.
	Name string
	// Addr is the address when the host is an IP literal; the zero Addr
	// for a name.
	Addr netip.Addr
	// Internal says what makes the host one of this machine's or its
	// networks' ("a loopback address", ...), "" for any other host.
	Internal string
}

// idnaHost maps a host that is not ASCII as Chromium does (UTS #46,
// non-transitional, no STD3 rules: an underscore is allowed), so that
// "１２７.０.０.１" is judged as 127.0.0.1.
var idnaHost = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.StrictDomainName(false), idna.BidiRule())

// ParseHost reads h, a host as a URL's Hostname gives it (percent-decoded,
// no brackets) or as a proxy client names it, the way the WHATWG URL parser
// that browsers use does: a name not in ASCII is mapped by IDNA; one whose
// last label is a number is an IPv4 address in any of the spellings
// inet_aton takes (2130706433, 0x7f.1, 0177.0.0.1, 127.1). Names are not
// resolved here: what a name's DNS answer is when a program connects is not
// what it was at a check, and asking DNS would send the host out before
// anyone approved it (see Judge and JudgeAddr).
func ParseHost(h string) (Host, error) {
	if len(h) > 2 && h[0] == '[' && h[len(h)-1] == ']' {
		h = h[1 : len(h)-1]
	}
	if h == "" {
		return Host{}, errors.New("it names no host")
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return AddrHost(a.WithZone("")), nil
	}
	if !isASCII(h) {
		m, err := idnaHost.ToASCII(h)
		if err != nil {
			return Host{}, fmt.Errorf("its host %q is not a valid name (%v)", h, err)
		}
		h = m
	}
	given := h
	h = strings.TrimRight(strings.ToLower(h), ".")
	if h == "" {
		return Host{}, errors.New("it names no host")
	}
	if a, ok, err := parseIPv4(h); err != nil {
		return Host{}, fmt.Errorf("its host %q ends in a number but is no IPv4 address (%v)", given, err)
	} else if ok {
		return AddrHost(a), nil
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		// RFC 6761: the browser answers these itself, with loopback.
		return Host{Name: h, Internal: "a loopback name"}, nil
	}
	return Host{Name: h}, nil
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

// metadataAddrs are the cloud providers' instance metadata services, which
// hand out a machine's credentials to whoever asks from it.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack, ...
	netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
}

// AddrHost judges an IP address: IPv4 inside IPv6 (mapped, compatible,
// NAT64) is judged as the IPv4 address it carries.
func AddrHost(a netip.Addr) Host {
	a = a.Unmap()
	if a.Is6() && (ipv4Compat.Contains(a) && !a.IsLoopback() && !a.IsUnspecified() || nat64.Contains(a)) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	h := Host{Name: a.String(), Addr: a}
	switch {
	case a.IsLoopback():
		h.Internal = "a loopback address"
	case a.IsUnspecified() || thisHost.Contains(a):
		h.Internal = "an address of this machine"
	case slices.Contains(metadataAddrs, a):
		h.Internal = "a cloud metadata address"
	case a.IsPrivate() || sharedCGN.Contains(a):
		h.Internal = "a private network address"
	case a.IsLinkLocalUnicast():
		h.Internal = "a link-local address"
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
