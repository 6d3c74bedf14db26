//! One currency, two resources (seed 001 §6): a user's base tickets fund her
//! `user-UID.slice` on the CPU (tix_core::cgroup) and, with `--fund-io`,
//! at the block layer too, as the slice's `io.bfq.weight` and `io.weight`.
//!
//! Only the slices systemd makes are funded: a directory named
//! `user-UID.slice`, owned by root, directly under the cgroup root or under
//! a root-owned child of it (`user.slice`). A user's delegated subtree is
//! hers, so a slice she names after someone else there is never written.
//! Each knob's value before tix wrote it is kept and written back when the
//! user's base is no longer set or the daemon stops: nothing is lost.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use tix_core::cgroup::{io_weight, slice_uid, BFQ_WEIGHT_MAX, IO_WEIGHT_MAX};

/// The block layer's weight knobs and their ranges: BFQ's, and
/// blk-iocost's (which counts only where iocost is enabled on a device).
const KNOBS: [(&str, u64); 2] = [
    ("io.bfq.weight", BFQ_WEIGHT_MAX),
    ("io.weight", IO_WEIGHT_MAX),
];

/// Slices a scan looks at, at most: far more users than a machine has.
const MAX_SLICES: usize = 65_536;

#[derive(Debug, Default)]
pub struct IoFunding {
    root: PathBuf,
    /// Whose folders are slices: root's (tests use their own uid).
    owner: u32,
    /// Knob file → its default weight before tix first wrote it.
    saved: BTreeMap<PathBuf, u64>,
    /// Slices already reported as having no weight knob.
    said: BTreeSet<PathBuf>,
}

/// The default weight a knob reads back (`default N`, first line).
fn read_default(file: &Path) -> Option<u64> {
    let text = fs::read_to_string(file).ok()?;
    let first = text.lines().next()?;
    first
        .strip_prefix("default ")
        .unwrap_or(first)
        .trim()
        .parse()
        .ok()
}

fn write_weight(file: &Path, w: u64) -> std::io::Result<()> {
    // cgroupfs has no symlinks; O_NOFOLLOW says so for any other mount.
    let mut f = fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(file)?;
    f.write_all(format!("{w}\n").as_bytes())
}

fn owned_dir(p: &Path, owner: u32) -> bool {
    fs::symlink_metadata(p).is_ok_and(|m| m.is_dir() && m.uid() == owner)
}

impl IoFunding {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        IoFunding {
            root: root.into(),
            owner: 0,
            ..Default::default()
        }
    }

    /// systemd's user slices under the root: (uid, path).
    fn slices(&self) -> Vec<(u32, PathBuf)> {
        let mut out = Vec::new();
        let mut parents = vec![self.root.clone()];
        if let Ok(rd) = fs::read_dir(&self.root) {
            for e in rd.flatten() {
                if owned_dir(&e.path(), self.owner) {
                    parents.push(e.path());
                }
            }
        }
        for parent in parents {
            let Ok(rd) = fs::read_dir(&parent) else {
                continue;
            };
            for e in rd.flatten() {
                let name = e.file_name();
                let Some(uid) = name.to_str().and_then(slice_uid) else {
                    continue;
                };
                if owned_dir(&e.path(), self.owner) && out.len() < MAX_SLICES {
                    out.push((uid, e.path()));
                }
            }
        }
        out
    }

    /// Bring every slice's weights to its user's base (`bases`: the users
    /// whose base is set), and put back the weights of slices whose user
    /// no longer has one. Returns one line per thing worth logging.
    pub fn sync(&mut self, bases: &BTreeMap<u32, u64>) -> Vec<String> {
        let mut log = Vec::new();
        let mut funded = BTreeSet::new();
        for (uid, slice) in self.slices() {
            let Some(&base) = bases.get(&uid) else {
                continue;
            };
            let mut any = false;
            for (knob, max) in KNOBS {
                let file = slice.join(knob);
                let Some(now) = read_default(&file) else {
                    continue;
                };
                any = true;
                funded.insert(file.clone());
                let want = io_weight(base, max);
                if now == want {
                    continue;
                }
                self.saved.entry(file.clone()).or_insert(now);
                match write_weight(&file, want) {
                    Ok(()) => log.push(format!(
                        "{}: {want} (uid {uid}'s base {base}; was {now})",
                        file.display()
                    )),
                    Err(e) => log.push(format!("{}: not written: {e}", file.display())),
                }
            }
            if !any && self.said.insert(slice.clone()) {
                log.push(format!(
                    "{}: no io.bfq.weight or io.weight (the io controller is not enabled \
                     above it); uid {uid}'s I/O is not funded",
                    slice.display()
                ));
            }
        }
        let stale: Vec<PathBuf> = self
            .saved
            .keys()
            .filter(|f| !funded.contains(*f))
            .cloned()
            .collect();
        for file in stale {
            log.extend(self.put_back(&file));
        }
        log
    }

    fn put_back(&mut self, file: &Path) -> Option<String> {
        let was = self.saved.remove(file)?;
        // A slice that went away took its knob with it.
        if !file.exists() {
            return None;
        }
        Some(match write_weight(file, was) {
            Ok(()) => format!("{}: {was} again (no base sets it)", file.display()),
            Err(e) => format!("{}: {was} not written back: {e}", file.display()),
        })
    }

    /// Every knob tix wrote gets its earlier weight back (the daemon stops).
    pub fn restore(&mut self) -> Vec<String> {
        let files: Vec<PathBuf> = self.saved.keys().cloned().collect();
        files.iter().filter_map(|f| self.put_back(f)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> u32 {
        unsafe { libc::geteuid() }
    }

    /// A fake cgroup tree in a temporary folder, owned by the test's user
    /// (who stands for root): files behave as plain files (a write
    /// replaces the text), which is all `sync` relies on.
    fn tree(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tix-io-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        for s in ["user.slice/user-1001.slice", "user.slice/user-1002.slice"] {
            fs::create_dir_all(d.join(s)).unwrap();
            fs::write(d.join(s).join("io.bfq.weight"), "default 100\n").unwrap();
        }
        fs::write(
            d.join("user.slice/user-1001.slice/io.weight"),
            "default 100\n",
        )
        .unwrap();
        d
    }

    fn funding(d: &Path, owner: u32) -> IoFunding {
        IoFunding {
            owner,
            ..IoFunding::new(d)
        }
    }

    fn knob(d: &Path, s: &str) -> u64 {
        read_default(&d.join(s)).unwrap()
    }

    #[test]
    fn bases_fund_the_slices_and_are_put_back() {
        let d = tree("fund");
        let mut io = funding(&d, me());
        let bases = BTreeMap::from([(1001, 3000), (1003, 500)]);
        let log = io.sync(&bases);
        assert_eq!(knob(&d, "user.slice/user-1001.slice/io.bfq.weight"), 300);
        assert_eq!(knob(&d, "user.slice/user-1001.slice/io.weight"), 300);
        assert_eq!(knob(&d, "user.slice/user-1002.slice/io.bfq.weight"), 100);
        assert_eq!(log.len(), 2, "{log:?}");
        // A second pass changes nothing and says nothing.
        assert!(io.sync(&bases).is_empty());
        // bob's base set, alice's gone: bob's slice funded, alice's back.
        let log = io.sync(&BTreeMap::from([(1002, 250)]));
        assert_eq!(knob(&d, "user.slice/user-1002.slice/io.bfq.weight"), 25);
        assert_eq!(knob(&d, "user.slice/user-1001.slice/io.bfq.weight"), 100);
        assert_eq!(knob(&d, "user.slice/user-1001.slice/io.weight"), 100);
        assert_eq!(log.len(), 3, "{log:?}");
        assert_eq!(io.restore().len(), 1);
        assert_eq!(knob(&d, "user.slice/user-1002.slice/io.bfq.weight"), 100);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn only_the_trusted_owners_top_slices_are_funded() {
        let d = tree("owner");
        // Someone else's folders (here: everything, as the trusted owner
        // is another uid) are never slices.
        let mut io = funding(&d, me().wrapping_add(1));
        assert!(io.sync(&BTreeMap::from([(1001, 9000)])).is_empty());
        assert_eq!(knob(&d, "user.slice/user-1001.slice/io.bfq.weight"), 100);
        // Deeper than user.slice/…: a delegated subtree's folder.
        let deeper = d.join("user.slice/user-1002.slice/x/user-1001.slice");
        fs::create_dir_all(&deeper).unwrap();
        fs::write(deeper.join("io.bfq.weight"), "default 100\n").unwrap();
        let mut io = funding(&d, me());
        io.sync(&BTreeMap::from([(1001, 9000)]));
        assert_eq!(knob(&d, "user.slice/user-1001.slice/io.bfq.weight"), 900);
        assert_eq!(
            knob(
                &d,
                "user.slice/user-1002.slice/x/user-1001.slice/io.bfq.weight"
            ),
            100
        );
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_slice_without_knobs_is_said_once() {
        let d = std::env::temp_dir().join(format!("tix-io-none-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(d.join("user-1001.slice")).unwrap();
        let mut io = funding(&d, me());
        let bases = BTreeMap::from([(1001, 3000)]);
        assert_eq!(io.sync(&bases).len(), 1);
        assert!(io.sync(&bases).is_empty());
        fs::remove_dir_all(&d).unwrap();
    }
}
