//! The state file: every setting the daemon accepted (tix_ctl::daemon::Saved)
//! written by atomic replace and fsync before the answer, read back when the
//! daemon starts again, so a restart (kill -9, upgrade, crash) loses nothing.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use tix_ctl::daemon::Saved;

/// Default place of the state file.
pub const DEFAULT_PATH: &str = "/var/lib/tix/state.json";
/// A state file names at most 65,536 processes and 4,096 users, well under
/// this; a larger file is not ours.
const MAX_BYTES: u64 = 16 << 20;

fn ctx(path: &Path, what: &str, e: impl std::fmt::Display) -> String {
    format!("{what} {}: {e}", path.display())
}

/// Read the state file; None when there is none yet.
pub fn load(path: &Path) -> Result<Option<Saved>, String> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ctx(path, "state file", e)),
    };
    if !meta.file_type().is_file() {
        return Err(ctx(path, "state file", "not a regular file"));
    }
    if meta.len() > MAX_BYTES {
        return Err(ctx(
            path,
            "state file",
            format!("larger than {MAX_BYTES} bytes"),
        ));
    }
    let mut text = String::new();
    File::open(path)
        .and_then(|f| f.take(MAX_BYTES + 1).read_to_string(&mut text))
        .map_err(|e| ctx(path, "reading state file", e))?;
    Saved::parse(&text)
        .map(Some)
        .map_err(|e| ctx(path, "state file", e))
}

/// Write `saved` to `path` durably: a temporary file in the same folder,
/// fsync, rename over the old one, fsync the folder. A crash at any point
/// leaves the old file or the new one, never a mix.
pub fn save(path: &Path, saved: &Saved) -> Result<(), String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp: PathBuf = {
        let mut n = path.file_name().unwrap_or_default().to_os_string();
        n.push(".tmp");
        dir.join(n)
    };
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)
        .map_err(|e| ctx(&tmp, "writing", e))?;
    f.write_all(saved.to_text().as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|e| ctx(&tmp, "writing", e))?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(|e| ctx(path, "replacing", e))?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| ctx(dir, "syncing", e))
}

/// Make the state file's folder (root only) if missing.
pub fn prepare(path: &Path) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(|e| ctx(dir, "creating", e))?;
        }
    }
    Ok(())
}

/// A stale socket may be removed only if it is a socket (not a file
/// someone put there) and nobody answers on it.
pub fn is_socket(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tix_ctl::daemon::SavedProc;

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tix-state-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn round_trip_and_replace() {
        let d = tmpdir("rt");
        let p = d.join("state.json");
        assert_eq!(load(&p), Ok(None));
        let mut s = Saved::default();
        s.bases.insert(1001, 500);
        save(&p, &s).unwrap();
        s.procs.push(SavedProc {
            tgid: 7,
            start: 9,
            tickets: 300,
            currency: 0,
        });
        save(&p, &s).unwrap();
        assert_eq!(load(&p), Ok(Some(s)));
        assert!(!d.join("state.json.tmp").exists());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn odd_files_are_refused_with_their_path() {
        let d = tmpdir("odd");
        let p = d.join("state.json");
        std::fs::write(&p, "{\"bases\":{\"1\":1}}").unwrap();
        let e = load(&p).unwrap_err();
        assert!(
            e.contains("state.json") && e.contains("out of range"),
            "{e}"
        );
        std::fs::remove_file(&p).unwrap();
        std::fs::create_dir(&p).unwrap();
        assert!(load(&p).unwrap_err().contains("not a regular file"));
        std::fs::remove_dir(&p).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", &p).unwrap();
        assert!(load(&p).unwrap_err().contains("not a regular file"));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
