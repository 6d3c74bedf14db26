//! `scx_tix --policy gr3` (or wf2q, eevdf, vtrr, srr, wfq, rr): the
//! policies whose queues do not fit BPF run in user space, in scx_tix_user,
//! on tix-core's own policy objects. scx_tix hands the command over (exec)
//! so one command names every policy, as `tix sim` does; lottery and stride
//! stay native here, with tickets, currencies and the control socket.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

/// The policies scx_tix hands to scx_tix_user.
/// (wrr too, so scx_tix_user says why it refuses it.)
pub const USER_POLICIES: &[&str] = &["gr3", "wf2q", "eevdf", "vtrr", "srr", "wfq", "wrr", "rr"];

/// The options that mean the same to scx_tix_user (value-taking).
const PASSED_ON: &[&str] = &["--slice-us", "--balance", "--balance-ms"];
/// scx_tix_user's own switches, passed on (TWRS: thread weights per process).
const SWITCHES: &[&str] = &["--twrs"];

/// If argv names a user-space policy, the arguments scx_tix_user gets, or
/// the one-line reason they cannot be handed over; None for every other
/// command line (scx_tix goes on as usual).
pub fn handover(args: &[OsString]) -> Option<Result<Vec<OsString>, String>> {
    let args: Vec<String> = args
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut policy = None;
    let mut out = Vec::new();
    let mut rest = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let (key, val) = match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let takes_value = key == "--policy" || PASSED_ON.contains(&key.as_str());
        let bare = val.is_none();
        let value = if takes_value && val.is_none() {
            i += 1;
            args.get(i).cloned()
        } else {
            val
        };
        if key == "--policy" {
            policy = value;
        } else if takes_value {
            out.push(key);
            out.extend(value);
        } else if SWITCHES.contains(&key.as_str()) && bare {
            out.push(key);
        } else {
            rest.push(key);
        }
        i += 1;
    }
    let policy = policy.filter(|p| USER_POLICIES.contains(&p.as_str()))?;
    if let Some(other) = rest.first() {
        return Some(Err(format!(
            "--policy {policy} runs in user space (scx_tix_user), which takes --slice-us, \
             --twrs, --balance and --balance-ms only, not {other}; tickets, currencies and the \
             control socket are lottery's and stride's"
        )));
    }
    let mut v: Vec<OsString> = vec!["--policy".into(), policy.into()];
    v.extend(out.into_iter().map(OsString::from));
    Some(Ok(v))
}

/// Replace this process with scx_tix_user (beside this executable, else on
/// PATH); returns only on failure.
pub fn exec(args: Vec<OsString>) -> String {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("scx_tix_user")))
        .filter(|p| p.exists());
    let prog = beside.unwrap_or_else(|| PathBuf::from("scx_tix_user"));
    let err = std::process::Command::new(&prog).args(args).exec();
    format!("running {}: {err}", prog.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<OsString> {
        std::iter::once("scx_tix")
            .chain(s.split_whitespace())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn user_policies_are_handed_over_with_their_slice() {
        let got = handover(&argv("--policy gr3 --slice-us 4000"))
            .unwrap()
            .unwrap();
        assert_eq!(got, argv("--policy gr3 --slice-us 4000")[1..].to_vec());
        let got = handover(&argv("--slice-us=2000 --policy=wf2q"))
            .unwrap()
            .unwrap();
        assert_eq!(got, argv("--policy wf2q --slice-us 2000")[1..].to_vec());
        let got = handover(&argv("--twrs --policy eevdf")).unwrap().unwrap();
        assert_eq!(got, argv("--policy eevdf --twrs")[1..].to_vec());
        let got = handover(&argv("--policy gr3 --balance shuttle --balance-ms=50"))
            .unwrap()
            .unwrap();
        assert_eq!(
            got,
            argv("--policy gr3 --balance shuttle --balance-ms 50")[1..].to_vec()
        );
    }

    #[test]
    fn native_policies_and_plain_runs_stay() {
        assert!(handover(&argv("--policy lottery --slice-us 4000")).is_none());
        assert!(handover(&argv("--policy stride")).is_none());
        assert!(handover(&argv("")).is_none());
        assert!(handover(&argv("--policy nope")).is_none());
    }

    #[test]
    fn options_that_mean_nothing_there_are_refused() {
        let e = handover(&argv("--policy gr3 --config /etc/x.toml"))
            .unwrap()
            .unwrap_err();
        assert!(e.contains("--config"), "{e}");
    }
}
