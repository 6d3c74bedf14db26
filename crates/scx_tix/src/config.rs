//! /etc/tix/tix.toml: per-user default base tickets (Zepp's future work 3,
//! seed 000 §7), read once at start.
//!
//! ```toml
//! [base]
//! alice = 2000   # user name from /etc/passwd
//! 1002 = 500     # or a numeric uid
//! ```

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// uid of a user name, from /etc/passwd.
pub fn uid_of(name: &str) -> Option<u32> {
    tix_ctl::uid_of(name)
}

/// Parse the config text into uid → base tickets, every entry checked.
pub fn parse(text: &str, resolve: impl Fn(&str) -> Option<u32>) -> Result<BTreeMap<u32, u64>> {
    let v: toml::Table = toml::from_str(text).context("not valid TOML")?;
    let mut out = BTreeMap::new();
    for (k, val) in &v {
        if k != "base" {
            bail!("unknown section or key '{k}' (only [base])");
        }
        let Some(t) = val.as_table() else {
            bail!("'base' must be a table of user = tickets");
        };
        for (user, b) in t {
            let uid = match user.parse::<u32>() {
                Ok(u) => u,
                Err(_) => resolve(user).with_context(|| format!("no such user '{user}'"))?,
            };
            let Some(b) = b.as_integer() else {
                bail!("base tickets of '{user}' must be an integer");
            };
            let b = u64::try_from(b).unwrap_or(0);
            tix_ctl::check_base(b).map_err(|_| {
                anyhow::anyhow!(
                    "base tickets of '{user}' must be {}..{} (got {b})",
                    tix_ctl::MIN_BASE,
                    tix_ctl::MAX_BASE
                )
            })?;
            out.insert(uid, b);
        }
    }
    Ok(out)
}

/// Load the file; a missing file is an empty table unless `required`.
pub fn load(path: &Path, required: bool) -> Result<BTreeMap<u32, u64>> {
    match std::fs::read_to_string(path) {
        Ok(t) => parse(&t, uid_of).with_context(|| format!("config {}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => Ok(BTreeMap::new()),
        Err(e) => Err(e).with_context(|| format!("reading config {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn users(n: &str) -> Option<u32> {
        match n {
            "alice" => Some(1001),
            _ => None,
        }
    }

    #[test]
    fn names_and_uids() {
        let m = parse("[base]\nalice = 2000\n1002 = 500\n", users).unwrap();
        assert_eq!(m.get(&1001), Some(&2000));
        assert_eq!(m.get(&1002), Some(&500));
    }

    #[test]
    fn bad_entries_are_errors() {
        assert!(parse("[base]\nzed = 2000\n", users).is_err());
        assert!(parse("[base]\nalice = 50\n", users).is_err());
        assert!(parse("[base]\nalice = \"x\"\n", users).is_err());
        assert!(parse("[other]\n", users).is_err());
        assert!(parse("[base\n", users).is_err());
    }
}
