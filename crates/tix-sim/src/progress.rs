//! Progress bars for long sweeps (indicatif); silent when output is JSON or
//! stderr is not a terminal.

use indicatif::{ProgressBar, ProgressStyle};

pub struct Progress(Option<ProgressBar>);

impl Progress {
    pub fn new(len: u64, label: &str, enabled: bool) -> Progress {
        if !enabled || len == 0 {
            return Progress(None);
        }
        let pb = ProgressBar::new(len);
        if let Ok(style) = ProgressStyle::with_template("{msg:>24} [{bar:40}] {pos}/{len} {eta}") {
            pb.set_style(style.progress_chars("=> "));
        }
        pb.set_message(label.to_string());
        Progress(Some(pb))
    }
    pub fn hidden() -> Progress {
        Progress(None)
    }
    pub fn inc(&self, n: u64) {
        if let Some(pb) = &self.0 {
            pb.inc(n);
        }
    }
    pub fn set_message(&self, msg: &str) {
        if let Some(pb) = &self.0 {
            pb.set_message(msg.to_string());
        }
    }
    pub fn finish(&self) {
        if let Some(pb) = &self.0 {
            pb.finish_and_clear();
        }
    }
}
