//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// kernelFSTypes are the filesystems whose files are settings of the
// machine, by the magic number statfs reports, wherever they are mounted.
var kernelFSTypes = map[int64]string{
	unix.PROC_SUPER_MAGIC:    "procfs",
	unix.SYSFS_MAGIC:         "sysfs",
	unix.CGROUP_SUPER_MAGIC:  "a cgroup v1 hierarchy",
	unix.CGROUP2_SUPER_MAGIC: "the cgroup v2 hierarchy",
	unix.DEVPTS_SUPER_MAGIC:  "devpts",
	unix.DEBUGFS_MAGIC:       "debugfs",
	unix.TRACEFS_MAGIC:       "tracefs",
	unix.SECURITYFS_MAGIC:    "securityfs",
	unix.BPF_FS_MAGIC:        "the bpf filesystem",
	unix.BINFMTFS_MAGIC:      "binfmt_misc",
	unix.PSTOREFS_MAGIC:      "pstore",
	unix.EFIVARFS_MAGIC:      "efivarfs",
}

// kernelFSType names the kernel filesystem path is on by its type, "" when
// it is another (or cannot be told).
func kernelFSType(path string) string {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return ""
	}
	if name, ok := kernelFSTypes[int64(st.Type)]; ok {
		return "on " + name + ", a kernel filesystem"
	}
	return ""
}
