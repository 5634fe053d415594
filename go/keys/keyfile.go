package keys

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"syscall"
	"unicode/utf8"
)

// A key file holds secrets, and whoever may write it may put in a key of their
// own and mint tokens every replica accepts. So a key file is read only if it
// is a regular file (a FIFO, a device, a socket or a directory at the path is
// refused at once: the file is opened without blocking and looked at with
// fstat, so a FIFO with no writer never holds the reader waiting), and not if
// anyone may write it (unless the caller allows it), as Python's reader does.

// readKeyFile returns the key file's bytes (at most MaxKeyFileBytes) and its
// permission bits. Errors name the path and the rule, never the contents.
func readKeyFile(path string, allowWorldWritable bool) ([]byte, fs.FileMode, error) {
	data, perm, reason := readRegularFile(path, allowWorldWritable)
	if reason != "" {
		return nil, 0, keyringErrorf("the key file %s cannot be used: %s", path, reason)
	}
	return data, perm, nil
}

// readRegularFile is readKeyFile with the reason it failed ("" when it did not).
func readRegularFile(path string, allowWorldWritable bool) ([]byte, fs.FileMode, string) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, "it cannot be read: " + reasonOf(err)
	}
	defer f.Close()
	info, err := f.Stat() // fstat: the file opened, not whatever the path names by now
	if err != nil {
		return nil, 0, "it cannot be read: " + reasonOf(err)
	}
	if !info.Mode().IsRegular() {
		return nil, 0, "it is not a regular file (" + kindOf(info.Mode()) + "): give the path of the key file"
	}
	perm := info.Mode().Perm()
	if perm&0o002 != 0 && !allowWorldWritable && runtime.GOOS != "windows" {
		return nil, 0, fmt.Sprintf("anyone may write it (mode %04o): make it 0600 (chmod 600 FILE), "+
			"or load it with WithWorldWritableFile", uint32(perm))
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxKeyFileBytes+1))
	if err != nil {
		return nil, 0, "it cannot be read: " + reasonOf(err)
	}
	if len(data) > MaxKeyFileBytes {
		return nil, 0, fmt.Sprintf("it is larger than %d bytes", MaxKeyFileBytes)
	}
	return data, perm, ""
}

// parseKeyFile reads a key file's bytes by Parse's rules.
func parseKeyFile(path string, data []byte) (*Keyring, error) {
	if !utf8.Valid(data) {
		return nil, keyringErrorf("the key file %s is not UTF-8 text", path)
	}
	return Parse(string(data), "the key file "+path)
}

// reasonOf is the system's reason for a failed file operation, without the
// path the error repeats.
func reasonOf(err error) string {
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return pathErr.Err.Error()
	}
	return err.Error()
}

func kindOf(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeDevice != 0, mode&fs.ModeCharDevice != 0:
		return "a device"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a file"
}
