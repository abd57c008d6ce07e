//! Output: a markdown table for people, one JSON object per line for tools.
//!
//! The JSON is written (and, for the tests, read back) by hand: the rows are
//! flat objects of strings and numbers, which needs no serde.

use std::fmt::Write as _;

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

    /// The JSON row: `{"bench","variant","param","value","unit"}`, where
    /// `value` is the median (`null` if it is not finite).
    pub fn json_line(&self) -> String {
        json_object(&[
            ("bench", JsonValue::Str(self.bench.clone())),
            ("variant", JsonValue::Str(self.variant.clone())),
            ("param", JsonValue::Str(self.param.clone())),
            ("value", JsonValue::Num(self.median())),
            ("unit", JsonValue::Str(self.unit.clone())),
        ])
    }
}

/// A value in a flat JSON object.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonValue {
    /// A string.
    Str(String),
    /// A number; written as `null` when not finite.
    Num(f64),
    /// `null`.
    Null,
}

/// Appends `s` to `out` as a JSON string literal (quotes included).
pub fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// One flat JSON object on one line, keys in the given order.
pub fn json_object(fields: &[(&str, JsonValue)]) -> String {
    let mut out = String::from("{");
    for (i, (key, value)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_json_string(&mut out, key);
        out.push(':');
        match value {
            JsonValue::Str(s) => write_json_string(&mut out, s),
            // `Display` for f64 never uses exponents, so this is valid JSON.
            JsonValue::Num(x) if x.is_finite() => {
                let _ = write!(out, "{x}");
            }
            JsonValue::Num(_) | JsonValue::Null => out.push_str("null"),
        }
    }
    out.push('}');
    out
}

/// The string field `key` of a parsed object, if it is one.
pub fn json_str<'a>(fields: &'a [(String, JsonValue)], key: &str) -> Option<&'a str> {
    match fields.iter().find(|(k, _)| k == key).map(|(_, v)| v) {
        Some(JsonValue::Str(s)) => Some(s),
        _ => None,
    }
}

/// The number field `key` of a parsed object; `null` (a non-finite value
/// when written) reads as NaN.
pub fn json_num(fields: &[(String, JsonValue)], key: &str) -> Option<f64> {
    match fields.iter().find(|(k, _)| k == key).map(|(_, v)| v) {
        Some(JsonValue::Num(x)) => Some(*x),
        Some(JsonValue::Null) => Some(f64::NAN),
        _ => None,
    }
}

/// Parses one flat JSON object whose values are strings, numbers or `null`
/// (what [`json_object`] writes). Enough for the tests; not a JSON parser.
///
/// # Errors
/// A description of the first thing it does not understand.
pub fn parse_json_object(line: &str) -> Result<Vec<(String, JsonValue)>, String> {
    let mut p = Parser {
        chars: line.trim().chars().collect(),
        pos: 0,
    };
    p.expect('{')?;
    let mut fields = Vec::new();
    p.skip_ws();
    if p.peek() == Some('}') {
        p.pos += 1;
    } else {
        loop {
            p.skip_ws();
            let key = p.string()?;
            p.skip_ws();
            p.expect(':')?;
            p.skip_ws();
            let value = p.value()?;
            fields.push((key, value));
            p.skip_ws();
            match p.next() {
                Some(',') => continue,
                Some('}') => break,
                other => return Err(format!("expected ',' or '}}', found {other:?}")),
            }
        }
    }
    p.skip_ws();
    if p.pos != p.chars.len() {
        return Err("trailing characters after the object".into());
    }
    Ok(fields)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        self.pos += usize::from(c.is_some());
        c
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, want: char) -> Result<(), String> {
        match self.next() {
            Some(c) if c == want => Ok(()),
            other => Err(format!("expected {want:?}, found {other:?}")),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect('"')?;
        let mut s = String::new();
        loop {
            match self.next().ok_or("unterminated string")? {
                '"' => return Ok(s),
                '\\' => match self.next().ok_or("unterminated escape")? {
                    '"' => s.push('"'),
                    '\\' => s.push('\\'),
                    '/' => s.push('/'),
                    'n' => s.push('\n'),
                    'r' => s.push('\r'),
                    't' => s.push('\t'),
                    'u' => {
                        let hex: String = (0..4).filter_map(|_| self.next()).collect();
                        let code = u32::from_str_radix(&hex, 16)
                            .map_err(|_| format!("bad \\u escape {hex:?}"))?;
                        s.push(char::from_u32(code).ok_or("\\u escape is not a char")?);
                    }
                    other => return Err(format!("unknown escape \\{other}")),
                },
                c => s.push(c),
            }
        }
    }

    fn value(&mut self) -> Result<JsonValue, String> {
        match self.peek() {
            Some('"') => self.string().map(JsonValue::Str),
            Some('n') => {
                for want in "null".chars() {
                    self.expect(want)?;
                }
                Ok(JsonValue::Null)
            }
            _ => {
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_digit() || "+-.eE".contains(c))
                {
                    self.pos += 1;
                }
                let text: String = self.chars[start..self.pos].iter().collect();
                text.parse::<f64>()
                    .map(JsonValue::Num)
                    .map_err(|_| format!("bad number {text:?}"))
            }
        }
    }
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

    #[test]
    fn json_round_trip() {
        let m = Measurement {
            bench: "ddf-chain".into(),
            param: "n=\"10\"\\\n\u{1}".into(),
            variant: "hc".into(),
            unit: "ns/link".into(),
            samples: vec![3.0, 1.5, 2.0],
        };
        let line = m.json_line();
        assert!(!line.contains('\n'));
        let fields = parse_json_object(&line).unwrap();
        let keys: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["bench", "variant", "param", "value", "unit"]);
        assert_eq!(fields[2].1, JsonValue::Str(m.param.clone()));
        assert_eq!(fields[3].1, JsonValue::Num(2.0));
        assert_eq!(json_str(&fields, "param"), Some(m.param.as_str()));
        assert_eq!(json_num(&fields, "value"), Some(2.0));
        assert_eq!(json_num(&fields, "unit"), None, "a string is not a number");
        assert_eq!(json_str(&fields, "missing"), None);
    }

    #[test]
    fn null_reads_as_nan() {
        let fields = parse_json_object(r#"{"v":null}"#).unwrap();
        assert!(json_num(&fields, "v").is_some_and(f64::is_nan));
    }

    #[test]
    fn non_finite_numbers_are_null() {
        let line = json_object(&[("v", JsonValue::Num(f64::INFINITY))]);
        assert_eq!(line, r#"{"v":null}"#);
        assert_eq!(
            parse_json_object(&line).unwrap(),
            [("v".to_string(), JsonValue::Null)]
        );
        let tiny = json_object(&[("v", JsonValue::Num(1e-9))]);
        assert_eq!(parse_json_object(&tiny).unwrap()[0].1, JsonValue::Num(1e-9));
    }

    #[test]
    fn parser_rejects_garbage() {
        assert!(parse_json_object("{\"a\":1").is_err());
        assert!(parse_json_object("{\"a\":1} x").is_err());
        assert!(parse_json_object("[1]").is_err());
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
