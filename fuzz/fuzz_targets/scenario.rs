//! Any text as a scenario: a typed error or a system whose work is bounded,
//! never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = tix_sim::scenario::parse("fuzz.toml", text);
    }
});
