//! A hostile local client of the control socket, for the VM tests
//! (vm/tests/45-hostile.sh). Not installed; built with
//! `cargo build --release -p tix-ctl --example ctl-abuse`.
//!
//! ctl-abuse idle N SECS         hold N connections open, silent, for SECS
//! ctl-abuse trickle SECS        write one byte of a request per second
//! ctl-abuse flood SECS          write requests for SECS, never read an answer
//! ctl-abuse big MB              send one MB-megabyte line; print the answer
//! ctl-abuse handoff PID N PROG  connect, fork: the parent execs PROG (e.g. a
//!                               setuid program), the child writes
//!                               set_tickets PID N on the shared socket and
//!                               prints the answer
//! ctl-abuse ask JSON            one request; print its round trip in ms and the answer
//! ctl-abuse sleep SECS          sleep (as a setuid copy, the PROG above)

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

fn sock() -> String {
    std::env::var("TIX_SOCKET").unwrap_or_else(|_| tix_ctl::DEFAULT_SOCKET.into())
}

fn num(a: Option<&String>) -> u64 {
    a.and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        eprintln!("ctl-abuse: expected a number");
        std::process::exit(2)
    })
}

fn answer(s: &UnixStream) -> String {
    let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
    let mut line = String::new();
    let _ = BufReader::new(s).read_line(&mut line);
    line.trim().chars().take(300).collect()
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    match a.first().map(String::as_str) {
        Some("idle") => {
            let n = num(a.get(1));
            let secs = num(a.get(2));
            let mut held = Vec::new();
            let mut refused = 0;
            for _ in 0..n {
                match UnixStream::connect(sock()) {
                    Ok(s) => held.push(s),
                    Err(_) => refused += 1,
                }
            }
            println!(
                "idle: {} connected, {refused} refused at connect",
                held.len()
            );
            std::thread::sleep(Duration::from_secs(secs));
        }
        Some("trickle") => {
            let secs = num(a.get(1));
            let s = UnixStream::connect(sock()).expect("connect");
            let req = br#"{"op":"get_base","uid":0}"#;
            let t = Instant::now();
            let mut w = &s;
            for b in req.iter().cycle() {
                if t.elapsed() > Duration::from_secs(secs) || w.write_all(&[*b]).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_secs(1));
            }
            println!("trickle: {}", answer(&s));
        }
        Some("flood") => {
            let secs = num(a.get(1));
            let s = UnixStream::connect(sock()).expect("connect");
            let _ = s.set_write_timeout(Some(Duration::from_millis(200)));
            let req = b"{\"op\":\"status\"}\n".repeat(64);
            let t = Instant::now();
            let mut sent = 0usize;
            let mut w = &s;
            while t.elapsed() < Duration::from_secs(secs) {
                match w.write(&req) {
                    Ok(n) => sent += n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(10))
                    }
                    Err(_) => break,
                }
            }
            println!("flood: wrote {sent} bytes, then the daemon stopped taking them");
        }
        Some("big") => {
            let mb = num(a.get(1)) as usize;
            let s = UnixStream::connect(sock()).expect("connect");
            let _ = s.set_write_timeout(Some(Duration::from_secs(5)));
            let chunk = vec![b' '; 1 << 20];
            let mut w = &s;
            let mut sent = 0;
            for _ in 0..mb {
                if w.write_all(&chunk).is_err() {
                    break;
                }
                sent += 1;
            }
            println!("big: sent {sent} MiB; answer: {}", answer(&s));
        }
        Some("handoff") => {
            let pid = num(a.get(1));
            let n = num(a.get(2));
            let prog = a.get(3).expect("PROG");
            let s = UnixStream::connect(sock()).expect("connect");
            // SAFETY: fork in a single-threaded program.
            match unsafe { libc::fork() } {
                0 => {
                    // The child: wait for the parent's exec, then write.
                    std::thread::sleep(Duration::from_millis(500));
                    let mut w = &s;
                    let req = format!("{{\"op\":\"set_tickets\",\"pid\":{pid},\"tickets\":{n}}}\n");
                    let _ = w.write_all(req.as_bytes());
                    println!("handoff: {}", answer(&s));
                }
                p if p > 0 => {
                    use std::os::unix::process::CommandExt;
                    let e = std::process::Command::new(prog).args(["sleep", "3"]).exec();
                    eprintln!("ctl-abuse: exec {prog}: {e}");
                    std::process::exit(1);
                }
                _ => panic!("fork failed"),
            }
        }
        Some("ask") => {
            // One request's round trip, timed in-process: the daemon's
            // service time without the cost of starting a program.
            let req = a.get(1).expect("JSON");
            let t = Instant::now();
            let s = UnixStream::connect(sock()).expect("connect");
            let mut w = &s;
            w.write_all(format!("{req}\n").as_bytes()).expect("write");
            let ans = answer(&s);
            println!("{} {ans}", t.elapsed().as_millis());
        }
        Some("sleep") => std::thread::sleep(Duration::from_secs(num(a.get(1)))),
        _ => {
            eprintln!("usage: ctl-abuse idle N SECS | trickle SECS | flood SECS | big MB | handoff PID N PROG | ask JSON | sleep SECS");
            std::process::exit(2);
        }
    }
}
