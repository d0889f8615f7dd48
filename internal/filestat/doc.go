// Package filestat reads a file's identity from what os.Stat returned: its
// device and inode, and its status change time, which no user can set. The
// sha index of the plugins and the guard's kept sums of the exec rules'
// programs both key a file by them, so a file replaced or patched in place
// is hashed again.
//
// The status change time sits in a field whose name differs between
// systems (Ctim on Linux, Ctimespec on macOS and some BSDs); where the
// system has no such field, Ctime is 0 and Inode reports nothing, and the
// callers then hash on every use.
package filestat
