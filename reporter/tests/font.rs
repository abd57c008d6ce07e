//! A font named by HCMPI_REPORT_FONT that does not load is an error, not a
//! silent fallback (its own test binary: the font is chosen once per
//! process).

use report::chart::{Chart, Kind, Scale, Series, FONT_ENV};
use report::ReportError;

#[test]
fn a_named_font_that_does_not_load_is_an_error() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let not_a_font = dir.join(format!("not-a-font-{}.ttf", std::process::id()));
    std::fs::write(&not_a_font, b"plain text").unwrap();
    std::env::set_var(FONT_ENV, &not_a_font);
    let chart = Chart {
        file: "c.png".into(),
        title: "t".into(),
        x_label: "x".into(),
        y_label: "y".into(),
        categories: vec!["a".into()],
        series: vec![Series {
            name: "s".into(),
            values: vec![Some(1.0)],
        }],
        kind: Kind::Bars,
        scale: Scale::Linear,
    };
    let png = dir.join(format!("font-test-{}.png", std::process::id()));
    match chart.render("caption", &png) {
        Err(ReportError::BadFont(path)) => assert_eq!(path, not_a_font),
        other => panic!("expected BadFont, got {other:?}"),
    }
    assert!(!png.exists());
    std::fs::remove_file(&not_a_font).unwrap();
}
