//! The CLI's number parsing (tickets, bases, pids): any text gives a number
//! in range or one error line, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        match tix_ctl::parse_number(s, "TICKETS") {
            Ok(n) => assert_eq!(n.to_string().parse::<u64>(), Ok(n)),
            Err(e) => assert!(!e.contains('\n')),
        }
        if let Ok(p) = tix_ctl::parse_pid(s) {
            assert!(p > 0);
        }
    }
});
