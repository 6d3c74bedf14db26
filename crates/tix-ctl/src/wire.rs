//! Framing of the control protocol with its limits: requests are lines of
//! at most [`MAX_REQUEST`] bytes, each written by one sender. The daemon
//! feeds what each read returns, with the credentials the kernel attached
//! to it; a line whose bytes came from two senders (two processes sharing
//! one connection) is refused rather than credited to either.

use crate::{ErrorKind, Request, Response};

/// Largest request line, newline excluded. Every request fits in a few
/// hundred bytes; 64 KiB leaves room and bounds what a client can make the
/// root daemon hold per connection.
pub const MAX_REQUEST: usize = 64 * 1024;

/// Parse one request line (without its newline).
pub fn parse_request(line: &[u8]) -> Result<Request, Response> {
    if line.len() > MAX_REQUEST {
        return Err(too_long());
    }
    let text = std::str::from_utf8(line)
        .map_err(|_| Response::error(ErrorKind::BadRequest, "bad request: not UTF-8"))?;
    serde_json::from_str::<Request>(text.trim())
        .map_err(|e| Response::error(ErrorKind::BadRequest, format!("bad request: {e}")))
}

pub fn too_long() -> Response {
    Response::error(
        ErrorKind::BadRequest,
        format!("request longer than {MAX_REQUEST} bytes; connection closed"),
    )
}

/// What the framer makes of the bytes fed so far.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame<S> {
    /// A whole line and the one sender of all its bytes.
    Line(Vec<u8>, S),
    /// The line grew past the limit: answer and close.
    TooLong,
    /// Two senders wrote into one line: answer and close.
    Mixed,
}

/// Splits a byte stream into request lines, remembering who sent them.
#[derive(Debug)]
pub struct Framer<S> {
    buf: Vec<u8>,
    sender: Option<S>,
}

impl<S: Copy + PartialEq> Default for Framer<S> {
    fn default() -> Self {
        Framer {
            buf: Vec::new(),
            sender: None,
        }
    }
}

impl<S: Copy + PartialEq> Framer<S> {
    /// Bytes of a partial line held now.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// Feed one read's bytes, all from `from`. Returns the frames completed;
    /// after a TooLong or Mixed frame the connection must be closed (the
    /// framer has dropped its buffer).
    pub fn feed(&mut self, mut data: &[u8], from: S) -> Vec<Frame<S>> {
        let mut out = Vec::new();
        while !data.is_empty() {
            match self.sender {
                Some(s) if s != from => {
                    self.buf = Vec::new();
                    out.push(Frame::Mixed);
                    return out;
                }
                _ => self.sender = Some(from),
            }
            let nl = data.iter().position(|&b| b == b'\n');
            let take = nl.unwrap_or(data.len());
            if self.buf.len() + take > MAX_REQUEST {
                self.buf = Vec::new();
                out.push(Frame::TooLong);
                return out;
            }
            self.buf.extend_from_slice(&data[..take]);
            match nl {
                Some(i) => {
                    out.push(Frame::Line(std::mem::take(&mut self.buf), from));
                    self.sender = None;
                    data = &data[i + 1..];
                }
                None => data = &[],
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_and_joined_across_reads() {
        let mut f = Framer::default();
        assert_eq!(f.feed(b"{\"op\":", 1), vec![]);
        assert_eq!(f.pending(), 6);
        let out = f.feed(b"\"status\"}\n{\"op\":\"top\"}\n{", 1);
        assert_eq!(
            out,
            vec![
                Frame::Line(b"{\"op\":\"status\"}".to_vec(), 1),
                Frame::Line(b"{\"op\":\"top\"}".to_vec(), 1)
            ]
        );
        assert_eq!(parse_request(b"{\"op\":\"status\"}"), Ok(Request::Status));
        assert_eq!(f.pending(), 1);
    }

    #[test]
    fn a_line_from_two_senders_is_refused() {
        let mut f = Framer::default();
        assert_eq!(f.feed(b"{\"op\":\"set_tickets\",", 7), vec![]);
        assert_eq!(f.feed(b"\"pid\":1,\"tickets\":5}\n", 8), vec![Frame::Mixed]);
        // Whole lines from different senders are fine.
        let mut f = Framer::default();
        assert_eq!(f.feed(b"a\n", 7), vec![Frame::Line(b"a".to_vec(), 7)]);
        assert_eq!(f.feed(b"b\n", 8), vec![Frame::Line(b"b".to_vec(), 8)]);
    }

    #[test]
    fn the_limit_holds_in_one_read_or_many() {
        let mut f = Framer::default();
        let big = vec![b'x'; MAX_REQUEST];
        assert_eq!(f.feed(&big, 0), vec![]);
        assert_eq!(f.feed(b"y", 0), vec![Frame::TooLong]);
        assert_eq!(f.pending(), 0);
        let mut f = Framer::default();
        let mut exact = vec![b' '; MAX_REQUEST];
        exact.push(b'\n');
        assert!(matches!(f.feed(&exact, 0)[..], [Frame::Line(ref l, 0)] if l.len() == MAX_REQUEST));
        let mut f = Framer::default();
        assert_eq!(
            f.feed(&vec![b'x'; 3 * MAX_REQUEST], 0),
            vec![Frame::TooLong]
        );
    }

    #[test]
    fn bad_requests_are_one_line_errors() {
        for bad in [
            &b"\xff\xfe"[..],
            b"{",
            b"{\"op\":\"reboot\"}",
            b"{\"op\":\"set_tickets\",\"pid\":-1,\"tickets\":5}",
        ] {
            match parse_request(bad) {
                Err(Response::Error {
                    kind: ErrorKind::BadRequest,
                    message,
                }) => {
                    assert!(!message.contains('\n'), "{message}")
                }
                other => panic!("{other:?}"),
            }
        }
    }
}
