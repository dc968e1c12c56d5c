//! Figure 16 as an SVG image (with `plotters`): one panel per search, e-nodes, e-classes and
//! rules applied (so far) per iteration; dashed lines where a guided search starts a new
//! sketch guide.

use crate::error::{Error, Result};
use plotters::prelude::*;
use std::path::Path;

/// One iteration of a search.
pub struct Point {
    pub iteration: usize,
    /// The guide step it belongs to.
    pub step: usize,
    pub enodes: usize,
    pub eclasses: usize,
    /// Rules applied so far.
    pub rules_total: usize,
}

/// A line of a panel: its name, colour and value at each point.
type Series = (&'static str, RGBColor, fn(&Point) -> usize);

/// One search's per-iteration points.
pub struct Panel {
    pub title: String,
    pub points: Vec<Point>,
}

fn plot_error(e: impl std::fmt::Display) -> Error {
    Error::bad_input(format!("drawing the figure: {e}"))
}

/// Draws the panels in a 2 x 2 grid to `path` (written to a temporary file and renamed).
pub fn fig16(path: &Path, panels: &[Panel]) -> Result<()> {
    let tmp = path.with_extension("svg.tmp");
    {
        let root = SVGBackend::new(&tmp, (1200, 800)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        for (area, panel) in root.split_evenly((2, 2)).iter().zip(panels) {
            draw_panel(area, panel)?;
        }
        root.present().map_err(plot_error)?;
    }
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    p: &Panel,
) -> Result<()> {
    let x_max = p
        .points
        .iter()
        .map(|q| q.iteration)
        .max()
        .unwrap_or(1)
        .max(1);
    let y_max = p
        .points
        .iter()
        .map(|q| q.enodes.max(q.eclasses).max(q.rules_total))
        .max()
        .unwrap_or(1)
        .max(1);
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(70)
        .build_cartesian_2d(0..x_max + 1, 0..y_max + y_max / 10)
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .x_desc("iteration")
        .draw()
        .map_err(plot_error)?;
    let series: [Series; 3] = [
        ("e-nodes", BLUE, |q| q.enodes),
        ("e-classes", GREEN, |q| q.eclasses),
        ("rules applied", RED, |q| q.rules_total),
    ];
    for (name, color, y) in series {
        let line = p.points.iter().map(|q| (q.iteration, y(q)));
        chart
            .draw_series(LineSeries::new(line, color))
            .map_err(plot_error)?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    // A new sketch guide starts where the step changes.
    for w in p.points.windows(2).filter(|w| w[0].step != w[1].step) {
        let x = w[1].iteration;
        chart
            .draw_series(DashedLineSeries::new(
                [(x, 0), (x, y_max)],
                5,
                5,
                MAGENTA.into(),
            ))
            .map_err(plot_error)?;
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()
        .map_err(plot_error)?;
    Ok(())
}
