//! Charts as data, and their drawing as PNG with plotters.
//!
//! A [`Chart`] is categories along x (message sizes, thread counts,
//! configurations) and one [`Series`] per variant with a value per
//! category, drawn as lines or as grouped bars on a linear or logarithmic
//! y axis. Keeping the chart a plain value lets the figures be built and
//! tested apart from drawing them, and lets every chart share one look:
//! the title on top, the machine caption at the bottom.

use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontStyle;

use crate::error::ReportError;
use benches::report::format_value;

/// Pixels of every chart.
pub const SIZE: (u32, u32) = (960, 560);
const FOOTER: u32 = 30;
/// Width of one category on the x axis, in x coordinates.
const SLOT: i32 = 1000;
const FONT: &str = "sans-serif";
/// Environment variable naming the TrueType file for the charts' text.
pub const FONT_ENV: &str = "HCMPI_REPORT_FONT";
/// Where Debian, Fedora and Arch put DejaVu Sans.
const FONT_PATHS: [&str; 4] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];
/// Tableau 10: distinct in colour and in grey.
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// How the series are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A line with a marker per value.
    Lines,
    /// One bar per series in each category's group.
    Bars,
}

/// The y axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// From zero.
    Linear,
    /// Logarithmic: for values spread over decades.
    Log,
}

/// One variant: a value per category, `None` where it was not measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// Aligned with [`Chart::categories`].
    pub values: Vec<Option<f64>>,
}

/// A chart ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// File name in the report directory, e.g. `latency.png`.
    pub file: String,
    /// Title drawn on top.
    pub title: String,
    /// What the categories are.
    pub x_label: String,
    /// What the values are, with unit.
    pub y_label: String,
    /// The x axis, left to right.
    pub categories: Vec<String>,
    /// The variants.
    pub series: Vec<Series>,
    /// Lines or bars.
    pub kind: Kind,
    /// Linear or logarithmic y.
    pub scale: Scale,
}

impl Chart {
    /// The values that can be drawn on this chart's scale.
    fn drawable(&self) -> impl Iterator<Item = f64> + '_ {
        let log = self.scale == Scale::Log;
        self.series
            .iter()
            .flat_map(|s| s.values.iter().flatten().copied())
            .filter(move |v| v.is_finite() && (!log || *v > 0.0))
    }

    /// Whether there is anything to draw.
    pub fn is_empty(&self) -> bool {
        self.drawable().next().is_none()
    }

    /// Draws the chart with `caption` (the machine) at the bottom into the
    /// PNG file `path`.
    ///
    /// # Errors
    /// No font to draw text with, or plotters cannot draw or write the file.
    pub fn render(&self, caption: &str, path: &Path) -> Result<(), ReportError> {
        register_font()?;
        let draw_error = |source: Box<dyn std::error::Error + Send + Sync>| ReportError::Draw {
            file: path.to_owned(),
            source,
        };
        let root = BitMapBackend::new(path, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw_error(Box::new(e)))?;
        let (plot, footer) = root.split_vertically(SIZE.1 - FOOTER);
        footer
            .draw_text(
                caption,
                &(FONT, 15).into_font().color(&RGBColor(90, 90, 90)),
                (12, 6),
            )
            .map_err(|e| draw_error(Box::new(e)))?;
        let (low, high) = self.y_range();
        match self.scale {
            Scale::Linear => self.draw(&plot, low..high, low),
            Scale::Log => self.draw(&plot, (low..high).log_scale(), low),
        }
        .map_err(draw_error)?;
        root.present().map_err(|e| draw_error(Box::new(e)))
    }

    /// The y range: from zero (linear) or a little below the smallest value
    /// (log) to a little above the largest, plus room on top for the legend
    /// so that it does not hide data.
    fn y_range(&self) -> (f64, f64) {
        let legend = if self.series.len() > 1 {
            let rows = self.series.len() as f64;
            ((rows * 19.0 + 16.0) / f64::from(SIZE.1 - FOOTER - 110)).min(0.45)
        } else {
            0.0
        };
        let (min, max) = self
            .drawable()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
        if !min.is_finite() {
            return (if self.scale == Scale::Log { 0.1 } else { 0.0 }, 1.0);
        }
        match self.scale {
            Scale::Linear => (
                0.0,
                if max > 0.0 {
                    max * 1.12 / (1.0 - legend)
                } else {
                    1.0
                },
            ),
            Scale::Log => {
                let (low, high) = (min / 2.0, max * 2.0);
                let decades = (high / low).log10();
                (low, low * 10f64.powf(decades / (1.0 - legend)))
            }
        }
    }

    fn draw<Y>(
        &self,
        area: &DrawingArea<BitMapBackend<'_>, Shift>,
        y: Y,
        base: f64,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>>
    where
        Y: AsRangedCoord<Value = f64>,
        Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        // x in thousandths of a category: integer coordinates format by
        // default, and bars of a group sit at fractions of a category.
        let n = self.categories.len();
        let at = |i: usize| (i as i32) * SLOT;
        let x = (-SLOT / 2..at(n) - SLOT / 2).with_key_points((0..n).map(at).collect());
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, (FONT, 24))
            .margin(14)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .build_cartesian_2d(x, y)?;
        let category = |v: &i32| {
            let i = v.div_euclid(SLOT) as usize;
            if v.rem_euclid(SLOT) == 0 && i < n {
                self.categories[i].clone()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .x_label_formatter(&category)
            .y_label_formatter(&|v| axis_value(*v))
            .light_line_style(RGBColor(238, 238, 238))
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 17))
            .draw()?;
        let groups = self.series.len().max(1) as i32;
        let width = SLOT * 8 / 10 / groups;
        let labels_on_bars = self.kind == Kind::Bars && n * self.series.len() <= 16;
        for (j, series) in self.series.iter().enumerate() {
            let color = COLORS[j % COLORS.len()];
            let points: Vec<(i32, f64)> = series
                .values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.map(|v| (at(i), v)))
                .filter(|(_, v)| v.is_finite() && (self.scale == Scale::Linear || *v > 0.0))
                .collect();
            let annotation = match self.kind {
                Kind::Lines => {
                    let mut segment = Vec::new();
                    for window in points.windows(2) {
                        // Unmeasured categories break the line.
                        if window[1].0 - window[0].0 == SLOT {
                            segment.push(PathElement::new(
                                vec![window[0], window[1]],
                                color.stroke_width(2),
                            ));
                        }
                    }
                    chart.draw_series(segment)?;
                    chart.draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))?
                }
                Kind::Bars => {
                    let left = |x: i32| x - SLOT * 4 / 10 + j as i32 * width;
                    chart.draw_series(points.iter().map(|&(i, v)| {
                        Rectangle::new([(left(i), base), (left(i) + width, v)], color.filled())
                    }))?
                }
            };
            annotation
                .label(series.name.as_str())
                .legend(move |(px, py)| {
                    Rectangle::new([(px, py - 5), (px + 14, py + 5)], color.filled())
                });
            if labels_on_bars {
                let style = (FONT, 13)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Center, VPos::Bottom));
                chart.draw_series(points.iter().map(|&(i, v)| {
                    let center = i - SLOT * 4 / 10 + j as i32 * width + width / 2;
                    Text::new(format_value(v), (center, v), style.clone())
                }))?;
            }
        }
        if self.series.len() > 1 {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(RGBColor(200, 200, 200))
                .label_font((FONT, 15))
                .draw()?;
        }
        Ok(())
    }
}

/// An axis label: [`format_value`] without trailing zeros (`1.4`, `10`).
fn axis_value(v: f64) -> String {
    let text = format_value(v);
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// Makes a TrueType font known to plotters once per process: from
/// [`FONT_ENV`] or the usual DejaVu Sans paths.
fn register_font() -> Result<(), ReportError> {
    /// Why no font was registered, kept for every later chart.
    #[derive(Clone)]
    enum Missing {
        /// The file the user named does not load.
        Named(std::path::PathBuf),
        /// None of the usual paths holds a font.
        Looked(String),
    }
    static REGISTERED: OnceLock<Result<(), Missing>> = OnceLock::new();
    let result = REGISTERED.get_or_init(|| {
        // A font the user names is the only one tried: a typo must not
        // pass unnoticed behind a fallback.
        if let Some(named) = std::env::var_os(FONT_ENV) {
            let path = std::path::PathBuf::from(named);
            return load_font(&path).ok_or(Missing::Named(path));
        }
        FONT_PATHS
            .iter()
            .find_map(|path| load_font(Path::new(path)))
            .ok_or_else(|| Missing::Looked(FONT_PATHS.join(", ")))
    });
    result.clone().map_err(|missing| match missing {
        Missing::Named(path) => ReportError::BadFont(path),
        Missing::Looked(looked) => ReportError::NoFont { looked },
    })
}

/// Registers the TrueType file `path` as the charts' font, if it is one.
fn load_font(path: &Path) -> Option<()> {
    let bytes = std::fs::read(path).ok()?;
    // plotters keeps the font for the life of the process.
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    plotters::style::register_font(FONT, FontStyle::Normal, bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_values_lose_trailing_zeros() {
        assert_eq!(axis_value(1.4), "1.4");
        assert_eq!(axis_value(10.0), "10");
        assert_eq!(axis_value(0.2), "0.2");
        assert_eq!(axis_value(1500.0), "1500");
        assert_eq!(axis_value(0.0), "0");
    }

    #[test]
    fn the_legend_gets_room_above_the_data() {
        let chart = |series: usize, scale| Chart {
            file: "c.png".into(),
            title: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            categories: vec!["a".into()],
            series: (0..series)
                .map(|i| Series {
                    name: i.to_string(),
                    values: vec![Some(10.0)],
                })
                .collect(),
            kind: Kind::Bars,
            scale,
        };
        let alone = chart(1, Scale::Linear).y_range();
        assert!(alone.0 == 0.0 && (alone.1 - 11.2).abs() < 1e-9, "{alone:?}");
        assert!(chart(4, Scale::Linear).y_range().1 > 12.0);
        let (low, high) = chart(4, Scale::Log).y_range();
        assert!(low == 5.0 && high > 20.0);
    }
}
