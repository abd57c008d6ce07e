//! Runs the logic of each example (`hc-runtime/examples/`) in-process.
//!
//! The example files are included as modules rather than run through cargo,
//! which would be slow and could wait on cargo's build lock. Their `main`s
//! are only wrappers that print `run()`'s line or exit non-zero
//! (`wake_latency`'s prints a table of what `measure` returns).

#[path = "../examples/fig1_async_finish.rs"]
mod fig1;

#[path = "../examples/fig2_vector_add.rs"]
mod fig2;

#[path = "../examples/ddf_pipeline.rs"]
mod pipeline;

#[path = "../examples/wake_latency.rs"]
mod wake_latency;

#[test]
fn fig1_async_finish() {
    let line = fig1::run().unwrap();
    assert!(line.starts_with("fig1:"), "{line}");
    assert!(line.contains("T1 ran STMT1"), "{line}");
    assert!(line.contains("T0 ran STMT2"), "{line}");
    assert!(line.ends_with("OK"), "{line}");
}

#[test]
#[cfg_attr(miri, ignore = "full-size example: too slow under Miri")]
fn fig2_vector_add() {
    let line = fig2::run().unwrap();
    assert_eq!(
        line,
        "fig2: vectorAdd of 1048576 floats in 65536 asyncs of 16: OK"
    );
}

#[test]
fn fig2_vector_add_handles_a_partial_last_chunk_and_verify_catches_errors() {
    let n = 10 * fig2::PART_SIZE + 5;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 2.0 * i as f32).collect();
    let mut c = vec![f32::NAN; n];
    fig2::vector_add(&a, &b, &mut c);
    assert_eq!(fig2::verify(&a, &b, &c), Ok(()));
    assert!(c.iter().enumerate().all(|(i, &x)| x == 3.0 * i as f32));

    c[n - 1] += 1.0;
    let err = fig2::verify(&a, &b, &c).unwrap_err();
    assert!(
        matches!(err, fig2::Mismatch::Element { index, .. } if index == n - 1),
        "{err:?}"
    );
    assert!(
        err.to_string().starts_with(&format!("C[{}] = ", n - 1)),
        "{err}"
    );
    assert_eq!(
        fig2::verify(&a, &b, &c[1..]),
        Err(fig2::Mismatch::Length {
            a: n,
            b: n,
            c: n - 1
        })
    );
}

#[test]
#[cfg_attr(miri, ignore = "full-size example: too slow under Miri")]
fn ddf_pipeline() {
    let line = pipeline::run().unwrap();
    assert!(
        line.starts_with("ddf_pipeline: 6 stages x 500 items"),
        "{line}"
    );
    assert!(line.ends_with("OK"), "{line}");
}

#[test]
#[cfg_attr(miri, ignore = "full-size example: too slow under Miri")]
fn ddf_pipeline_verify_catches_errors() {
    let expected = pipeline::sequential();
    let mut got = pipeline::pipelined();
    assert_eq!(pipeline::verify(&got, &expected), Ok(()));
    // The result depends on every stage: stage 0 with another carry differs.
    assert_ne!(pipeline::stage(0, 1, None), pipeline::stage(0, 1, Some(2)));
    got[123] ^= 1;
    let err = pipeline::verify(&got, &expected).unwrap_err();
    assert!(
        matches!(err, pipeline::Mismatch::Item { index: 123, got: g, expected: e } if g == e ^ 1),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("item 123: "), "{err}");
    assert_eq!(
        pipeline::verify(&got[1..], &expected),
        Err(pipeline::Mismatch::Length {
            got: expected.len() - 1,
            expected: expected.len()
        })
    );
}

#[test]
#[cfg_attr(miri, ignore = "parks a real thread hundreds of times")]
fn wake_latency_measures_every_wake() {
    let latencies = wake_latency::measure(std::time::Duration::from_micros(1));
    // One latency per wake, none lost or counted twice (the times
    // themselves are the machine's, not checked).
    assert_eq!(latencies.len(), wake_latency::WAKES);
}
