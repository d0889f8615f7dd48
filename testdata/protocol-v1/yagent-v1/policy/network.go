package policy

import (
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strings"
)

// NetworkRules are a profile's network grants, the one table web_fetch, the
// browser and every command's traffic are judged by. An entry is a host
// name (example.com), a wildcard over its subdomains (*.example.com, at any
// depth, not the name itself), an IP address (127.0.0.1, ::1, [::1]) or a
// CIDR block (10.0.0.0/8); a name entry with other glob characters is
// matched as a path.Match pattern over the whole name.
type NetworkRules struct {
	// Allow lists the hosts reachable without asking.
	Allow []string `koanf:"allow" json:"allow,omitempty" yaml:"allow,omitempty"`
	// Deny lists the hosts never reachable: deny wins over allow, and no
	// approval (nor -y) opens one.
	Deny []string `koanf:"deny" json:"deny,omitempty" yaml:"deny,omitempty"`
	// Unlisted is what a host neither list names gets: NetworkAsk (the
	// default, also for "") or NetworkDeny.
	Unlisted string `koanf:"unlisted" json:"unlisted,omitempty" yaml:"unlisted,omitempty"`
}

// Network decisions, and the values of network.unlisted, spelled as
// profiles write them.
const (
	NetworkAllow = "allow"
	NetworkAsk   = "ask"
	NetworkDeny  = "deny"
)

// NetDecision is the policy's answer for one host.
type NetDecision struct {
	// Action is NetworkAllow, NetworkAsk or NetworkDeny.
	Action string
	// Entry is the profile's entry that decided, as the profile writes it
	// ("network.allow: *.github.com"); "" when no entry did.
	Entry string
	// Reason says, for an ask or a deny, what the host is and why it is
	// not allowed, as a clause the caller can put in its question or its
	// refusal.
	Reason string
	// Hint says, for an ask or a deny, what would change the answer.
	Hint string
}

// CheckNetworkEntry says what is wrong with a network.allow or
// network.deny entry, nil when it is one the rules read.
func CheckNetworkEntry(e string) error {
	t := strings.TrimSpace(e)
	switch {
	case t == "":
		return fmt.Errorf("an empty entry (want a host name, *.example.com, an IP address or a CIDR block)")
	case strings.Contains(t, "://"):
		return fmt.Errorf("%q has a scheme (want the host alone, such as example.com)", e)
	case strings.ContainsAny(t, " \t"):
		return fmt.Errorf("%q holds white space (want one host per entry)", e)
	}
	if _, err := netip.ParsePrefix(t); err == nil {
		return nil
	}
	if strings.Contains(t, "/") {
		return fmt.Errorf("%q has a path or is no valid CIDR block (want example.com or 10.0.0.0/8)", e)
	}
	if _, err := path.Match(strings.ToLower(t), ""); err != nil {
		return fmt.Errorf("%q is no valid pattern (%v)", e, err)
	}
	return nil
}

// entryMatch reports whether entry e names h. A wildcard names no host of
// this machine or its networks when allowing (wildcard false for them): a
// glob written for public names never grants loopback or a private
// address; denying, every entry counts.
func entryMatch(e string, h Host, allowing bool) bool {
	p := strings.TrimRight(strings.ToLower(strings.TrimSpace(e)), ".")
	if pf, err := netip.ParsePrefix(p); err == nil {
		return h.Addr.IsValid() && pf.Contains(h.Addr)
	}
	if a, err := netip.ParseAddr(strings.Trim(p, "[]")); err == nil {
		return h.Addr.IsValid() && AddrHost(a.WithZone("")).Addr == h.Addr
	}
	if !strings.ContainsAny(p, "*?[") {
		return p == h.Name
	}
	if allowing && h.Internal != "" || h.Addr.IsValid() {
		return false
	}
	if rest, ok := strings.CutPrefix(p, "*."); ok && !strings.ContainsAny(rest, "*?[") {
		return strings.HasSuffix(h.Name, "."+rest)
	}
	ok, _ := path.Match(p, h.Name)
	return ok
}

// Judge decides for h before it is resolved: a deny entry refuses it, an
// allow entry allows it, a host of this machine or its networks not named
// exactly asks, and any other host gets what network.unlisted says. A name
// the answer allows is judged again on each address it resolves to
// (JudgeAddr) before anything connects.
func (r *NetworkRules) Judge(h Host) NetDecision {
	if r == nil {
		r = &NetworkRules{}
	}
	for _, e := range r.Deny {
		if entryMatch(e, h, false) {
			return NetDecision{Action: NetworkDeny, Entry: "network.deny: " + e,
				Reason: fmt.Sprintf("the profile's network.deny entry %s refuses %s", e, h.Name),
				Hint:   "only the profile's admin can change a network.deny entry; do not try to reach it another way"}
		}
	}
	for _, e := range r.Allow {
		if entryMatch(e, h, true) {
			return NetDecision{Action: NetworkAllow, Entry: "network.allow: " + e}
		}
	}
	return r.unlisted(h, h.Name)
}

// JudgeAddr decides for a, one address the name h resolved to, once Judge
// allowed h (or a user approved it): an address a deny entry names is
// refused; one of this machine or its networks (a name that resolves to
// 127.0.0.1 or 169.254.169.254 is treated as that address) asks unless an
// allow entry names the address, its block or h exactly; any other address
// keeps the name's answer.
func (r *NetworkRules) JudgeAddr(h Host, a netip.Addr) NetDecision {
	if r == nil {
		r = &NetworkRules{}
	}
	ah := AddrHost(a.WithZone(""))
	for _, e := range r.Deny {
		if entryMatch(e, ah, false) {
			return NetDecision{Action: NetworkDeny, Entry: "network.deny: " + e,
				Reason: fmt.Sprintf("%s resolves to %s, which the profile's network.deny entry %s refuses", h.Name, ah.Name, e),
				Hint:   "only the profile's admin can change a network.deny entry; do not try to reach it another way"}
		}
	}
	if ah.Internal == "" {
		return NetDecision{Action: NetworkAllow}
	}
	for _, e := range r.Allow {
		exact := !strings.ContainsAny(e, "*?[") && entryMatch(e, h, true)
		if exact || entryMatch(e, ah, true) {
			return NetDecision{Action: NetworkAllow, Entry: "network.allow: " + e}
		}
	}
	return r.unlisted(ah, fmt.Sprintf("%s (which %s resolves to)", ah.Name, h.Name))
}

// unlisted is the answer for a host no entry names, shown as shown.
func (r *NetworkRules) unlisted(h Host, shown string) NetDecision {
	deny := r.Unlisted == NetworkDeny
	switch {
	case h.Internal != "" && deny:
		return NetDecision{Action: NetworkDeny, Entry: "network.unlisted: deny",
			Reason: fmt.Sprintf("%s is %s, which the profile does not name, and the profile refuses unlisted hosts", shown, h.Internal),
			Hint:   fmt.Sprintf("only the profile's admin can add %s to network.allow", h.Name)}
	case h.Internal != "":
		return NetDecision{Action: NetworkAsk,
			Reason: fmt.Sprintf("%s is %s, which the profile does not name", shown, h.Internal),
			Hint:   fmt.Sprintf("add %s itself to network.allow in the profile (a wildcard never grants such a host)", h.Name)}
	case deny:
		return NetDecision{Action: NetworkDeny, Entry: "network.unlisted: deny",
			Reason: fmt.Sprintf("%s is not in the profile's network.allow, and the profile refuses unlisted hosts", shown),
			Hint:   fmt.Sprintf("only the profile's admin can add %s to network.allow", h.Name)}
	}
	return NetDecision{Action: NetworkAsk,
		Reason: fmt.Sprintf("%s is a host the profile does not allow", shown),
		Hint:   fmt.Sprintf("add %s to network.allow in the profile", h.Name)}
}

// EntryWithin reports whether every host the entry e names is named by an
// entry of list: a name by an entry that matches it, a wildcard by the same
// or a wider wildcard, an address or a block by an address or a block that
// holds it. A pattern of other globs is within list only if list holds it
// as written. The managed layer's allow list bounds the lower layers'
// entries by it.
func EntryWithin(e string, list []string) bool {
	p := strings.TrimRight(strings.ToLower(strings.TrimSpace(e)), ".")
	if slices.ContainsFunc(list, func(m string) bool { return strings.TrimRight(strings.ToLower(strings.TrimSpace(m)), ".") == p }) {
		return true
	}
	pf, err := netip.ParsePrefix(p)
	if err != nil {
		if a, err := netip.ParseAddr(strings.Trim(p, "[]")); err == nil {
			a = AddrHost(a.WithZone("")).Addr
			pf = netip.PrefixFrom(a, a.BitLen())
		}
	}
	if pf.IsValid() {
		return slices.ContainsFunc(list, func(m string) bool {
			m = strings.TrimSpace(m)
			if mp, err := netip.ParsePrefix(m); err == nil {
				return mp.Bits() <= pf.Bits() && mp.Contains(pf.Addr())
			}
			if a, err := netip.ParseAddr(strings.Trim(m, "[]")); err == nil {
				return pf.Bits() == pf.Addr().BitLen() && AddrHost(a.WithZone("")).Addr == pf.Addr()
			}
			return false
		})
	}
	if rest, ok := strings.CutPrefix(p, "*."); ok && !strings.ContainsAny(rest, "*?[") {
		return slices.ContainsFunc(list, func(m string) bool {
			s, ok := strings.CutPrefix(strings.TrimRight(strings.ToLower(strings.TrimSpace(m)), "."), "*.")
			return ok && !strings.ContainsAny(s, "*?[") && (rest == s || strings.HasSuffix(rest, "."+s))
		})
	}
	if strings.ContainsAny(p, "*?[") {
		return false
	}
	h, err := ParseHost(p)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(list, func(m string) bool { return entryMatch(m, h, true) })
}
