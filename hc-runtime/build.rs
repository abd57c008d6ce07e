//! Detects ThreadSanitizer builds.
//!
//! `cfg(sanitize = "thread")` is unstable, but cargo passes the sanitizers
//! of a build to build scripts in `CARGO_CFG_SANITIZE`. Under TSan the
//! runtime replaces the stand-alone fences TSan cannot see with equivalent
//! atomic operations (see `sync::acquire_after_release`), as crossbeam does
//! with its own `crossbeam_sanitize_thread`.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-check-cfg=cfg(hcmpi_sanitize_thread)");
    let sanitizers = std::env::var("CARGO_CFG_SANITIZE").unwrap_or_default();
    if sanitizers.split(',').any(|s| s == "thread") {
        println!("cargo:rustc-cfg=hcmpi_sanitize_thread");
    }
}
