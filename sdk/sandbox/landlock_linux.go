//go:build linux

package sandbox

import (
	"errors"
	"fmt"

	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rulesetAttr is struct landlock_ruleset_attr up to its scoped field: the
// kernel accepts a larger struct whose unknown fields are zero.
type rulesetAttr struct {
	handledAccessFS  uint64
	handledAccessNet uint64
	scoped           uint64
}

// handledAccess is every file access right of the ABI: a right not handled
// would be allowed everywhere. Network rights are left to the network
// namespace.
func handledAccess(abi int) uint64 {
	h := uint64(1<<13 - 1) // ABI 1: execute .. make_sym
	if abi >= 2 {
		h |= accessRefer
	}
	if abi >= 3 {
		h |= accessTruncate
	}
	if abi >= 5 {
		h |= accessIoctlDev
	}
	if abi >= 9 {
		h |= accessResolveUnix
	}
	return h
}

// landlockABI asks the kernel for its Landlock ABI version.
func landlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, errno
	}
	return int(v), nil
}

// llRuleset is a built ruleset descriptor, shared by every command whose
// rules are the same; refs keeps an evicted one open while a Start uses it.
type llRuleset struct {
	fd   int
	refs int
}

// rulesetCache keeps built rulesets by their rules and the identity of
// their paths, and the opened descriptors of the system paths.
type rulesetCache struct {
	mu     sync.Mutex
	sets   map[string]*llRuleset
	order  []string
	gen    string
	sysFDs map[string]int
}

const rulesetCacheSize = 32

var rulesets = &rulesetCache{sets: map[string]*llRuleset{}, sysFDs: map[string]int{}}

// key names rs and the files its call paths are now: a folder replaced
// under the same name must not keep the old one's rules. The machine's
// paths are pinned by rs.Gen.
func (c *rulesetCache) key(abi int, rs *ruleset) string {
	var b strings.Builder
	b.WriteString(rs.Gen)
	b.WriteString(strconv.Itoa(abi))
	for _, r := range rs.Rules {
		b.WriteString("\x00" + r.Path + "\x01" + strconv.FormatUint(r.Access, 16) + identity(r.Path))
	}
	for _, r := range rs.Sys {
		if r.Linked {
			b.WriteString("\x00" + r.Path + identity(r.Path))
		}
	}
	return b.String()
}

// identity names the file at path now: device, inode and birth time, where
// the file system keeps it (a new folder may get a freed inode number, and
// the change time moves with every file made in it).
func identity(path string) string {
	var st unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_INO|unix.STATX_BTIME, &st) != nil {
		return ""
	}
	return "\x01" + strconv.FormatUint(uint64(st.Dev_major)<<32|uint64(st.Dev_minor), 16) + "." +
		strconv.FormatUint(st.Ino, 16) + "." + strconv.FormatInt(st.Btime.Sec, 16) + "." + strconv.FormatUint(uint64(st.Btime.Nsec), 16)
}

// get returns the ruleset descriptor of rs, built on first use; release it
// after landlock_restrict_self.
func (c *rulesetCache) get(abi int, rs *ruleset) (*llRuleset, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key, gen := c.key(abi, rs), rs.Gen
	if l := c.sets[key]; l != nil {
		l.refs++
		return l, nil
	}
	if gen != c.gen {
		for _, fd := range c.sysFDs {
			unix.Close(fd)
		}
		c.sysFDs, c.gen = map[string]int{}, gen
	}
	fd, err := c.build(abi, rs)
	if err != nil {
		return nil, err
	}
	l := &llRuleset{fd: fd, refs: 2} // the cache's and the caller's
	c.sets[key] = l
	c.order = append(c.order, key)
	if len(c.order) > rulesetCacheSize {
		old := c.sets[c.order[0]]
		delete(c.sets, c.order[0])
		c.order = slices.Delete(c.order, 0, 1)
		c.unref(old)
	}
	return l, nil
}

func (c *rulesetCache) release(l *llRuleset) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unref(l)
}

func (c *rulesetCache) unref(l *llRuleset) {
	if l.refs--; l.refs == 0 {
		unix.Close(l.fd)
	}
}

// build makes the kernel ruleset of rs.
func (c *rulesetCache) build(abi int, rs *ruleset) (int, error) {
	handled := handledAccess(abi)
	attr := rulesetAttr{handledAccessFS: handled}
	if abi >= 6 {
		attr.scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	}
	r, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno == unix.EINVAL && handled&accessResolveUnix != 0 {
		// A kernel whose ABI number runs ahead of the right: without it.
		handled &^= accessResolveUnix
		attr.handledAccessFS = handled
		r, _, errno = unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	}
	if errno != 0 {
		return -1, fmt.Errorf("sandbox: creating the Landlock ruleset: %w", errno)
	}
	fd := int(r)
	if e := sharedRun(); e.fd >= 0 {
		// The tmpfs over /run may be listed.
		attr := unix.LandlockPathBeneathAttr{Allowed_access: accessReadDir, Parent_fd: int32(e.fd)}
		if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(fd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0); errno != 0 {
			unix.Close(fd)
			return -1, fmt.Errorf("sandbox: adding the Landlock rule for the tmpfs over /run: %w", errno)
		}
	}
	for i, rl := range append(slices.Clone(rs.Sys), rs.Rules...) {
		// A linked system file (resolv.conf into /run) may be replaced
		// without its folder changing: its descriptor is not kept.
		if err := c.addRule(fd, rl, handled, i < len(rs.Sys) && !rl.Linked); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

func (c *rulesetCache) addRule(rsfd int, rl rule, handled uint64, system bool) error {
	pfd, ok := c.sysFDs[rl.Path]
	if !ok {
		var err error
		pfd, err = unix.Open(rl.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EACCES) {
			return nil // gone since the rules were computed: nothing to grant
		}
		if err != nil {
			return fmt.Errorf("sandbox: opening %s for its Landlock rule: %w", rl.Path, err)
		}
		if system {
			c.sysFDs[rl.Path] = pfd
		} else {
			defer unix.Close(pfd)
		}
	}
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return fmt.Errorf("sandbox: %s: %w", rl.Path, err)
	}
	access := rl.Access & handled
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= rightsFile
	}
	if access == 0 {
		return nil
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(pfd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rsfd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("sandbox: adding the Landlock rule for %s: %w", rl.Path, errno)
	}
	return nil
}

// restrictSelf puts the calling thread (only it: no TSYNC) under l.
func restrictSelf(l *llRuleset) error {
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(l.fd), 0, 0); errno != 0 {
		return fmt.Errorf("sandbox: landlock_restrict_self: %w", errno)
	}
	return nil
}
