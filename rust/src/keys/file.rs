//! The one reader of key files: a regular file only (a FIFO, a device or a directory is refused
//! without waiting for a writer), not one anyone may write unless allowed, at most 1 MiB.

use std::io::Read;
use std::path::Path;

use crate::errors::KeyringError;

/// The largest key file read.
pub const MAX_KEY_FILE_BYTES: u64 = 1 << 20;

/// How a key file is read.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeyFileOptions {
    /// Accept a file anyone may write (mode o+w). Off by default: anyone could put in a key of their own.
    pub allow_world_writable: bool,
}

/// The key file's bytes. Errors name the path and the rule, never the contents.
pub(crate) fn read_key_file(path: &Path, options: KeyFileOptions) -> Result<Vec<u8>, KeyringError> {
    let refuse = |why: String| {
        KeyringError::new(format!(
            "the key file {} cannot be used: {why}",
            path.display()
        ))
    };
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Non-blocking, so opening a FIFO never waits for a writer; checked below on the opened file.
        open.custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    let mut file = open
        .open(path)
        .map_err(|e| refuse(format!("it cannot be read: {}", e.kind())))?;
    // The metadata of the file opened, not of whatever the path names by now.
    let meta = file
        .metadata()
        .map_err(|e| refuse(format!("it cannot be read: {}", e.kind())))?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        return Err(refuse(format!(
            "it is {kind}: give the path of the key file"
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o002 != 0 && !options.allow_world_writable {
            return Err(refuse(format!(
                "anyone may write it (mode {mode:04o}): make it 0600 (chmod 600 FILE), or allow it with KeyFileOptions"
            )));
        }
    }
    #[cfg(not(unix))]
    let _ = options;
    let mut data = Vec::new();
    (&mut file)
        .take(MAX_KEY_FILE_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(|e| refuse(format!("it cannot be read: {}", e.kind())))?;
    if data.len() as u64 > MAX_KEY_FILE_BYTES {
        return Err(refuse(format!(
            "it is larger than {MAX_KEY_FILE_BYTES} bytes"
        )));
    }
    Ok(data)
}
