//! Bytes from two senders, split at a fuzzer-chosen point, through the
//! daemon's framing, parser and rules over an in-memory backend: nothing
//! panics, every answer serialises, refused requests change nothing.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;
use tix_ctl::daemon::{memory::MemBackend, Caller, Daemon};
use tix_ctl::wire::{parse_request, Frame, Framer};
use tix_ctl::Response;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let (ctl, rest) = data.split_at(2);
    let cut = (ctl[0] as usize * rest.len()) / 256;
    let backend = MemBackend::default()
        .with_proc(10, 10, 500, 1001)
        .with_proc(20, 20, 600, 1002);
    let mut d = Daemon::new(backend, BTreeMap::new());
    d.backend.owner_change = (ctl[1] & 1 == 1).then_some(1002);
    d.backend.disk_fails = ctl[1] & 2 == 2;
    let mut f: Framer<u32> = Framer::default();
    let mut frames = f.feed(&rest[..cut], 1001);
    frames.extend(f.feed(&rest[cut..], if ctl[1] & 4 == 4 { 0 } else { 1001 }));
    for fr in frames {
        let Frame::Line(line, uid) = fr else { continue };
        let caller = Caller { uid, privileged: uid == 0 };
        let before = (
            d.backend.entries.clone(),
            d.backend.bases.clone(),
            d.backend.currencies.clone(),
        );
        let r = match parse_request(&line) {
            Ok(req) => d.handle(&caller, &req),
            Err(e) => Some(e),
        };
        if let Some(r) = r {
            serde_json::to_string(&r).expect("answers serialise");
            if matches!(r, Response::Error { .. }) {
                assert_eq!(
                    before,
                    (
                        d.backend.entries.clone(),
                        d.backend.bases.clone(),
                        d.backend.currencies.clone()
                    )
                );
            }
        }
    }
});
