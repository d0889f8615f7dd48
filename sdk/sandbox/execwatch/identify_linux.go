//go:build linux && (amd64 || arm64)

package execwatch

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

const (
	// maxShebang is the kernel's BINPRM_BUF_SIZE: it reads no more of a
	// #! line.
	maxShebang = 256
	// maxInterpreters is how many #! files the kernel follows before it
	// fails the exec with ELOOP (exec_binprm's depth limit).
	maxInterpreters = 5
)

// identify reads notification n's exec from its process and names its
// program. A non-zero errno is the answer the kernel itself would give (a
// file that does not exist): the exec fails with it, unjudged.
func identify(n *notification) (e Exec, errno unix.Errno) {
	e.Pid = int(n.Pid)
	dirfd, nameAt, argvAt, emptyPath := unix.AT_FDCWD, n.Data.Args[0], n.Data.Args[1], false
	if n.Data.Nr == sysExecveat {
		dirfd, nameAt, argvAt = int(int32(n.Data.Args[0])), n.Data.Args[1], n.Data.Args[2]
		emptyPath = n.Data.Args[4]&unix.AT_EMPTY_PATH != 0
	}
	mem, err := openMemory(e.Pid)
	if err != nil {
		e.Unidentified = fmt.Sprintf("cannot read the process's memory: %v", err)
		return e, 0
	}
	defer mem.close()
	name, complete, err := mem.cstring(nameAt, maxPath-1)
	switch {
	case err != nil:
		e.Unidentified = fmt.Sprintf("cannot read the file name: %v", err)
		return e, 0
	case !complete:
		return e, unix.ENAMETOOLONG
	}
	e.Path = name
	if e.Argv, e.Truncated, err = mem.argv(argvAt); err != nil {
		e.Unidentified = fmt.Sprintf("cannot read the arguments: %v", err)
		return e, 0
	}
	p, err := openProcess(e.Pid)
	if err != nil {
		e.Unidentified = fmt.Sprintf("cannot read the process: %v", err)
		return e, 0
	}
	defer p.close()
	e.Terminal = p.terminal()

	o := p.open(dirfd, name, emptyPath)
	if o.errno != 0 || o.why != "" {
		e.Unidentified = o.why
		return e, o.errno
	}
	e.Path = o.path
	e.files = append(e.files, o.f)

	hdr := header(o.f)
	if loaderFile(o.f, hdr, e.Path) {
		prog, ok := loaderProgram(e.Argv)
		if !ok {
			return e, 0 // the loader runs nothing (--help, --list-tunables)
		}
		e.Loader = true
		e.Path = prog
		if !strings.Contains(prog, "/") {
			e.Unidentified = fmt.Sprintf("the dynamic loader searches its library path for %q", prog)
			return e, 0
		}
		lo := p.open(unix.AT_FDCWD, prog, false)
		if lo.f == nil {
			// The loader opens its program only after the exec; a name that
			// does not resolve now could by then.
			e.Unidentified = fmt.Sprintf("the dynamic loader's program %s cannot be read", prog)
			if lo.why != "" {
				e.Unidentified += ": " + lo.why
			}
			return e, 0
		}
		e.Path = lo.path
		e.files = append(e.files, lo.f)
		return e, 0
	}

	// The #! chain, as the kernel walks it: each interpreter is opened like
	// an exec name of the process, relative to its folder.
	for {
		interp := shebang(hdr)
		if interp == "" {
			return e, 0
		}
		if len(e.Interpreters) == maxInterpreters {
			return e, unix.ELOOP
		}
		io := p.open(unix.AT_FDCWD, interp, false)
		if io.errno != 0 {
			return e, io.errno
		}
		if io.why != "" {
			e.Interpreters = append(e.Interpreters, interp)
			e.Unidentified = fmt.Sprintf("interpreter %s: %s", interp, io.why)
			return e, 0
		}
		e.Interpreters = append(e.Interpreters, io.path)
		e.files = append(e.files, io.f)
		hdr = header(io.f)
	}
}

// header is the start of f the kernel reads to choose how to run it.
func header(f *os.File) []byte {
	buf := make([]byte, maxShebang)
	n, _ := f.ReadAt(buf, 0)
	return buf[:n]
}

// shebang returns the interpreter a #! line names, "" when hdr has none.
// The kernel reads the first maxShebang bytes, skips blanks after #!, and
// takes the name up to the next blank.
func shebang(hdr []byte) string {
	line, ok := bytes.CutPrefix(hdr, []byte("#!"))
	if !ok {
		return ""
	}
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimLeft(line, " \t")
	if i := bytes.IndexAny(line, " \t\x00"); i >= 0 {
		line = line[:i]
	}
	return string(line)
}

// loaderFile says f is the dynamic loader: by name (ld-linux-x86-64.so.2,
// ld-2.31.so, ld-musl-x86_64.so.1) or, for a renamed copy, by content: a
// shared object without an interpreter of its own whose soname is ld-*.
func loaderFile(f *os.File, hdr []byte, path string) bool {
	if base := filepath.Base(path); strings.HasPrefix(base, "ld-") && strings.Contains(base, ".so") {
		return true
	}
	if len(hdr) < 64 || !bytes.HasPrefix(hdr, []byte(elf.ELFMAG)) || elf.Class(hdr[elf.EI_CLASS]) != elf.ELFCLASS64 {
		return false
	}
	bo := binary.ByteOrder(binary.LittleEndian)
	if elf.Data(hdr[elf.EI_DATA]) == elf.ELFDATA2MSB {
		bo = binary.BigEndian
	}
	if elf.Type(bo.Uint16(hdr[16:])) != elf.ET_DYN {
		return false
	}
	// Most programs have a PT_INTERP: decide from the program headers alone.
	phoff, phsize, phnum := bo.Uint64(hdr[32:]), int64(bo.Uint16(hdr[54:])), int64(bo.Uint16(hdr[56:]))
	if phsize < 4 || phnum > 256 {
		return false
	}
	phdrs := make([]byte, phsize*phnum)
	if n, _ := f.ReadAt(phdrs, int64(phoff)); int64(n) < phsize*phnum {
		return false
	}
	for i := int64(0); i < phnum; i++ {
		if elf.ProgType(bo.Uint32(phdrs[i*phsize:])) == elf.PT_INTERP {
			return false
		}
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return false
	}
	sonames, err := ef.DynString(elf.DT_SONAME)
	return err == nil && len(sonames) == 1 && strings.HasPrefix(sonames[0], "ld-")
}

// loaderProgram returns the program the dynamic loader is asked to run:
// its first operand after its own options, exactly as glibc's and musl's
// ld.so parse them (an unknown option is, for them, the program's name).
func loaderProgram(argv []string) (string, bool) {
	withArg := map[string]bool{
		"--library-path": true, "--glibc-hwcaps-prepend": true, "--glibc-hwcaps-mask": true,
		"--inhibit-rpath": true, "--audit": true, "--preload": true, "--argv0": true,
	}
	alone := map[string]bool{"--list": true, "--verify": true, "--inhibit-cache": true}
	for i := 1; i < len(argv); i++ {
		switch a := argv[i]; {
		case withArg[a]:
			i++
		case alone[a]:
		case a == "--help" || a == "--version" || a == "--list-tunables" || a == "--list-diagnostics":
			return "", false
		default:
			return a, true
		}
	}
	return "", false
}
