//! Plots with plotters, each written as SVG and PNG: cumulative service per
//! client over time (the papers' progress figures), lag over time, and
//! error-range charts for the GR3 §5.1 tables.

use crate::engine::SimResult;
use crate::error::{Result, SimError};
use plotters::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const FONT_PATHS: [&str; 4] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
];

/// plotters draws text with ab_glyph, which needs a font registered once.
fn ensure_font() -> Result<()> {
    static FONT: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    FONT.get_or_init(|| {
        for p in FONT_PATHS {
            if let Ok(bytes) = std::fs::read(p) {
                // plotters keeps the bytes for the life of the process.
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                    return Ok(());
                }
            }
        }
        Err(format!(
            "no TrueType font found for plot labels (looked in {}; install fonts-dejavu-core)",
            FONT_PATHS.join(", ")
        ))
    })
    .clone()
    .map_err(SimError::Invalid)
}

fn plot_err(path: &Path, e: impl std::fmt::Display) -> SimError {
    SimError::io(path, format!("plot: {e}"))
}

/// One named line of (x, y) points.
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

fn bounds(lines: &[Line]) -> ((f64, f64), (f64, f64)) {
    let mut x = (f64::INFINITY, f64::NEG_INFINITY);
    let mut y = (f64::INFINITY, f64::NEG_INFINITY);
    for l in lines {
        for &(a, b) in &l.points {
            x = (x.0.min(a), x.1.max(a));
            y = (y.0.min(b), y.1.max(b));
        }
    }
    if !x.0.is_finite() {
        x = (0.0, 1.0);
        y = (0.0, 1.0);
    }
    if x.1 <= x.0 {
        x.1 = x.0 + 1.0;
    }
    if y.1 <= y.0 {
        y = (y.0 - 1.0, y.1 + 1.0);
    }
    let pad = (y.1 - y.0) * 0.05;
    (x, (y.0 - pad, y.1 + pad))
}

fn draw_lines<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    xl: &str,
    yl: &str,
    lines: &[Line],
) -> std::result::Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let ((x0, x1), (y0, y1)) = bounds(lines);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(xl)
        .y_desc(yl)
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(|e| e.to_string())?;
    let many = lines.len() > 12;
    for (i, l) in lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let s = chart
            .draw_series(LineSeries::new(
                l.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?;
        if !many {
            s.label(l.name.clone()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        }
    }
    if !many && !lines.is_empty() {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(|e| e.to_string())?;
    }
    root.present().map_err(|e| e.to_string())
}

/// Write `stem.svg` and `stem.png`; returns the SVG path.
pub fn line_chart(stem: &Path, title: &str, xl: &str, yl: &str, lines: &[Line]) -> Result<PathBuf> {
    ensure_font()?;
    let svg = stem.with_extension("svg");
    let png = stem.with_extension("png");
    draw_lines(
        SVGBackend::new(&svg, (820, 480)).into_drawing_area(),
        title,
        xl,
        yl,
        lines,
    )
    .map_err(|e| plot_err(&svg, e))?;
    draw_lines(
        BitMapBackend::new(&png, (820, 480)).into_drawing_area(),
        title,
        xl,
        yl,
        lines,
    )
    .map_err(|e| plot_err(&png, e))?;
    Ok(svg)
}

/// One algorithm's error range for [`range_chart`].
pub struct Range {
    pub name: String,
    pub lo: f64,
    pub hi: f64,
    /// The paper's range, when it gave one.
    pub paper: Option<(f64, f64)>,
}

/// Signed log scale: the ranges span ±1 to ±400 quanta.
fn slog(v: f64) -> f64 {
    v.signum() * (1.0 + v.abs()).log10()
}

fn unslog(v: f64) -> f64 {
    v.signum() * (10f64.powf(v.abs()) - 1.0)
}

fn draw_ranges<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    ranges: &[Range],
) -> std::result::Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let top = ranges
        .iter()
        .flat_map(|r| {
            [r.lo.abs(), r.hi.abs()]
                .into_iter()
                .chain(r.paper.map(|p| p.0.abs().max(p.1.abs())))
        })
        .fold(1.0f64, f64::max);
    let ymax = slog(top) * 1.08;
    let n = ranges.len().max(1);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..n as f64, -ymax..ymax)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("service error (quanta, signed log scale)")
        .y_label_formatter(&|y| format!("{:.1}", unslog(*y)))
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(|e| e.to_string())?;
    let ours = RGBColor(31, 119, 180);
    let paper = RGBColor(214, 39, 40);
    for (i, r) in ranges.iter().enumerate() {
        let x = i as f64;
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x + 0.15, slog(r.lo)), (x + 0.45, slog(r.hi))],
                ours.filled(),
            )))
            .map_err(|e| e.to_string())?;
        // Names inside the plot, under the bars: plotters' numeric x axis
        // has no ticks at the bar centres.
        chart
            .draw_series(std::iter::once(Text::new(
                r.name.clone(),
                (x + 0.2, -ymax * 0.93),
                ("sans-serif", 14).into_font(),
            )))
            .map_err(|e| e.to_string())?;
        if let Some((lo, hi)) = r.paper {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x + 0.55, slog(lo)), (x + 0.85, slog(hi))],
                    paper.mix(0.7).filled(),
                )))
                .map_err(|e| e.to_string())?;
        }
    }
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(0.0, 0.0), (n as f64, 0.0)],
            BLACK,
        )))
        .map_err(|e| e.to_string())?;
    root.draw(&Text::new(
        "left bar: tix; right bar: the paper",
        (90, 40),
        ("sans-serif", 13).into_font(),
    ))
    .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

/// Error ranges per algorithm, ours beside the paper's; SVG and PNG.
pub fn range_chart(stem: &Path, title: &str, ranges: &[Range]) -> Result<PathBuf> {
    ensure_font()?;
    let svg = stem.with_extension("svg");
    let png = stem.with_extension("png");
    draw_ranges(
        SVGBackend::new(&svg, (820, 480)).into_drawing_area(),
        title,
        ranges,
    )
    .map_err(|e| plot_err(&svg, e))?;
    draw_ranges(
        BitMapBackend::new(&png, (820, 480)).into_drawing_area(),
        title,
        ranges,
    )
    .map_err(|e| plot_err(&png, e))?;
    Ok(svg)
}

/// Cumulative service (s) of every client against time (s).
pub fn service_lines(r: &SimResult) -> Vec<Line> {
    r.clients
        .iter()
        .enumerate()
        .map(|(g, c)| Line {
            name: c.name.clone(),
            points: r
                .series
                .t_ns
                .iter()
                .zip(&r.series.service_ns[g])
                .map(|(&t, &s)| (t as f64 / 1e9, s as f64 / 1e9))
                .collect(),
        })
        .collect()
}

/// Lag (ms) of every client against time (s).
pub fn lag_lines(r: &SimResult) -> Vec<Line> {
    r.clients
        .iter()
        .enumerate()
        .map(|(g, c)| Line {
            name: c.name.clone(),
            points: r
                .series
                .t_ns
                .iter()
                .zip(&r.series.lag_ns[g])
                .map(|(&t, &l)| (t as f64 / 1e9, l / 1e6))
                .collect(),
        })
        .collect()
}

/// `tix sim run --plot DIR`: service.{svg,png} and lag.{svg,png}.
pub fn run_plots(r: &SimResult, dir: &Path) -> Result<()> {
    line_chart(
        &dir.join("service"),
        &format!("{}: cumulative service", r.algo),
        "time (s)",
        "CPU time received (s)",
        &service_lines(r),
    )?;
    line_chart(
        &dir.join("lag"),
        &format!("{}: lag against GPS", r.algo),
        "time (s)",
        "lag (ms)",
        &lag_lines(r),
    )?;
    Ok(())
}
