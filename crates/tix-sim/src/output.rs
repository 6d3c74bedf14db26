//! A run's results as CSV (one row per client, and the time series in long
//! form) and as a human-readable table; JSON is serde of `SimResult`.

use crate::engine::SimResult;
use std::fmt::Write;

/// One row per client: the summary metrics.
pub fn clients_csv(r: &SimResult) -> String {
    let mut s = String::from(
        "client,process,user,cpu,service_ns,ideal_ns,lag_ns,min_lag_ns,max_lag_ns,share,wait_ns,dispatches,\
response_count,response_mean_ns,response_p50_ns,response_p99_ns,response_max_ns,turnaround_ns\n",
    );
    for c in &r.clients {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{:.1},{:.1},{:.1},{:.1},{:.6},{},{},{},{:.1},{:.1},{:.1},{:.1},{}",
            c.name,
            c.process,
            c.user.as_deref().unwrap_or(""),
            c.cpu,
            c.service_ns,
            c.ideal_ns,
            c.lag_ns,
            c.min_lag_ns,
            c.max_lag_ns,
            c.share,
            c.wait_ns,
            c.dispatches,
            c.response.count,
            c.response.mean,
            c.response.p50,
            c.response.p99,
            c.response.max,
            c.turnaround_ns.map(|t| t.to_string()).unwrap_or_default()
        );
    }
    s
}

/// The time series, one row per (sample, client).
pub fn series_csv(r: &SimResult) -> String {
    let mut s = String::from("t_ns,client,service_ns,lag_ns\n");
    for (k, t) in r.series.t_ns.iter().enumerate() {
        for (g, c) in r.clients.iter().enumerate() {
            let _ = writeln!(
                s,
                "{t},{},{},{:.1}",
                c.name, r.series.service_ns[g][k], r.series.lag_ns[g][k]
            );
        }
    }
    s
}

/// A table for people.
pub fn table(r: &SimResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} on {} cpu(s), {:.3} s simulated, {} slices, idle {:.3} s, {} migrations, Jain {:.4}",
        r.algo,
        r.cpus,
        r.duration_ns as f64 / 1e9,
        r.quanta,
        r.idle_ns as f64 / 1e9,
        r.migrations,
        r.jain
    );
    let _ = writeln!(
        s,
        "{:<16} {:>8} {:>12} {:>12} {:>10} {:>10} {:>10} {:>11} {:>11}",
        "client",
        "share%",
        "service s",
        "ideal s",
        "lag ms",
        "minlag ms",
        "maxlag ms",
        "wait s",
        "resp p99 ms"
    );
    for c in &r.clients {
        let _ = writeln!(
            s,
            "{:<16} {:>8.3} {:>12.3} {:>12.3} {:>10.2} {:>10.2} {:>10.2} {:>11.3} {:>11.2}",
            c.name,
            c.share * 100.0,
            c.service_ns as f64 / 1e9,
            c.ideal_ns / 1e9,
            c.lag_ns / 1e6,
            c.min_lag_ns / 1e6,
            c.max_lag_ns / 1e6,
            c.wait_ns as f64 / 1e9,
            c.response.p99 / 1e6
        );
    }
    s
}
