//! Output: a markdown table for people, one JSON object per line for tools.
//!
//! The JSON rows are `#[derive(Serialize, Deserialize)]` structs written and
//! read with `serde_json`; their fields are written in declaration order.
//! A non-finite number is written as `null` (serde_json's rule) and read
//! back as NaN ([`null_as_nan`]).

use std::fmt::Write as _;

use serde::{Deserialize, Deserializer, Serialize};

use crate::stats::{summarize, Summary};

/// All samples of one (bench, param, variant).
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// Benchmark name (`spawn`, `fib`, …).
    pub bench: String,
    /// Problem parameters, e.g. `flat n=1000000`.
    pub param: String,
    /// Implementation (`hc`, `rayon`, `seq`).
    pub variant: String,
    /// Unit of every sample (`ns/task`, `ms`, …).
    pub unit: String,
    /// One value per repetition, in run order.
    pub samples: Vec<f64>,
}

impl Measurement {
    /// Median, min and max of the samples (`None` without samples).
    pub fn summary(&self) -> Option<Summary> {
        summarize(&self.samples)
    }

    /// The median, or NaN without samples.
    pub fn median(&self) -> f64 {
        self.summary().map_or(f64::NAN, |s| s.median)
    }

    /// The JSON row of this measurement (its median as `value`).
    pub fn row(&self) -> MeasurementRow {
        MeasurementRow {
            bench: self.bench.clone(),
            variant: self.variant.clone(),
            param: self.param.clone(),
            value: self.median(),
            unit: self.unit.clone(),
        }
    }

    /// [`Measurement::row`] as one line of JSON.
    pub fn json_line(&self) -> String {
        self.row().json_line()
    }
}

/// One JSON row of `overhead --json`:
/// `{"bench","variant","param","value","unit"}`, in this order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasurementRow {
    /// Benchmark name.
    pub bench: String,
    /// Implementation.
    pub variant: String,
    /// Problem parameters.
    pub param: String,
    /// The median of the samples: `null` in JSON when not finite, NaN when
    /// read back.
    #[serde(deserialize_with = "null_as_nan")]
    pub value: f64,
    /// Unit of `value`.
    pub unit: String,
}

impl MeasurementRow {
    /// The row as one line of JSON.
    pub fn json_line(&self) -> String {
        // Strings and numbers only: serde_json fails on non-string map keys
        // and on failing `Serialize` impls, neither of which a row has.
        serde_json::to_string(self).expect("a row of strings and numbers serializes")
    }

    /// Reads one line written by [`MeasurementRow::json_line`].
    ///
    /// # Errors
    /// The line is not a JSON object with these fields.
    pub fn from_json_line(line: &str) -> serde_json::Result<MeasurementRow> {
        serde_json::from_str(line)
    }
}

/// Deserializes a number that may be `null` (how serde_json writes a
/// non-finite `f64`) as NaN; use it as
/// `#[serde(deserialize_with = "null_as_nan")]` on `f64` fields.
///
/// # Errors
/// The value is neither a number nor `null`.
pub fn null_as_nan<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
}

/// A markdown table; every row must have as many cells as `header`.
pub fn markdown_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut out = String::from("|");
        for (cell, w) in cells.zip(&widths) {
            let _ = write!(out, " {cell:<w$} |");
        }
        out.push('\n');
        out
    };
    let mut out = line(&mut header.iter().copied());
    out.push('|');
    for w in &widths {
        let _ = write!(out, "{}|", "-".repeat(w + 2));
    }
    out.push('\n');
    for row in rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    out
}

/// `x` with about four significant digits and no exponent.
pub fn format_value(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".into();
    }
    let magnitude = x.abs();
    let decimals = if magnitude >= 1000.0 {
        0
    } else if magnitude >= 100.0 {
        1
    } else if magnitude >= 10.0 {
        2
    } else if magnitude >= 1.0 || magnitude == 0.0 {
        3
    } else {
        // Four significant digits below 1.
        (3 - magnitude.log10().floor() as i32).clamp(3, 9) as usize
    };
    format!("{x:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measurement(param: &str, samples: Vec<f64>) -> Measurement {
        Measurement {
            bench: "ddf-chain".into(),
            param: param.into(),
            variant: "hc".into(),
            unit: "ns/link".into(),
            samples,
        }
    }

    #[test]
    fn json_round_trip() {
        let m = measurement("n=\"10\"\\\n\u{1}", vec![3.0, 1.5, 2.0]);
        let line = m.json_line();
        assert!(!line.contains('\n'));
        assert_eq!(
            line,
            r#"{"bench":"ddf-chain","variant":"hc","param":"n=\"10\"\\\n\u0001","value":2.0,"unit":"ns/link"}"#
        );
        let row = MeasurementRow::from_json_line(&line).unwrap();
        assert_eq!(row, m.row());
        assert_eq!(row.param, m.param);
        assert_eq!(row.value, 2.0);
    }

    #[test]
    fn typed_rows_reject_wrong_types_and_missing_fields() {
        let line = measurement("n=1", vec![1.0]).json_line();
        let wrong = line.replace(r#""value":1.0"#, r#""value":"1.0""#);
        assert_ne!(wrong, line);
        assert!(
            MeasurementRow::from_json_line(&wrong).is_err(),
            "a string is not a number"
        );
        let missing = line.replace(r#","unit":"ns/link""#, "");
        assert_ne!(missing, line);
        assert!(MeasurementRow::from_json_line(&missing).is_err());
    }

    #[test]
    fn null_reads_as_nan() {
        let row = MeasurementRow::from_json_line(
            r#"{"bench":"b","variant":"v","param":"p","value":null,"unit":"u"}"#,
        )
        .unwrap();
        assert!(row.value.is_nan());
    }

    #[test]
    fn non_finite_numbers_are_null() {
        for x in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
            let line = measurement("p", vec![x]).json_line();
            assert!(line.contains(r#""value":null,"#), "{line}");
            assert!(MeasurementRow::from_json_line(&line)
                .unwrap()
                .value
                .is_nan());
        }
        // Without samples the median is NaN.
        assert!(measurement("p", vec![]).json_line().contains("null"));
        let tiny = measurement("p", vec![1e-9]).json_line();
        assert_eq!(MeasurementRow::from_json_line(&tiny).unwrap().value, 1e-9);
    }

    #[test]
    fn parser_rejects_garbage() {
        let line = measurement("p", vec![1.0]).json_line();
        assert!(MeasurementRow::from_json_line(&line[..line.len() - 1]).is_err());
        assert!(MeasurementRow::from_json_line(&format!("{line} x")).is_err());
        assert!(MeasurementRow::from_json_line("[1]").is_err());
    }

    #[test]
    fn table_is_aligned() {
        let t = markdown_table(&["a", "bb"], &[vec!["long".into(), "x".into()]]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "| a    | bb |");
        assert_eq!(lines[1], "|------|----|");
        assert_eq!(lines[2], "| long | x  |");
    }

    #[test]
    fn values_are_formatted_compactly() {
        assert_eq!(format_value(12345.6), "12346");
        assert_eq!(format_value(123.456), "123.5");
        assert_eq!(format_value(12.3456), "12.35");
        assert_eq!(format_value(1.23456), "1.235");
        assert_eq!(format_value(0.00123456), "0.001235");
        assert_eq!(format_value(f64::NAN), "n/a");
    }
}
