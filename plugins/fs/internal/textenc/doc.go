// Package textenc detects how a text file is stored — byte order mark,
// character encoding (UTF-8, UTF-16 LE/BE, GB18030) and line endings — and
// converts between those bytes and the UTF-8 text the fs tools work on.
package textenc
