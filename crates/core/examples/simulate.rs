//! Runs one scenario file without Python, for profiling the core:
//! `cargo run --release --example simulate -- scenario.json` (or `.toml`).
use aqmlab_core::run::{load, simulate, Format};

fn main() {
    let path = std::env::args().nth(1).expect("usage: simulate SCENARIO.{json,toml}");
    let text = std::fs::read_to_string(&path).expect("readable scenario");
    let format = if path.ends_with(".json") { Format::Json } else { Format::Toml };
    let sc = load(&text, format, std::path::Path::new(&path).parent()).unwrap_or_else(|e| panic!("{e}"));
    let start = std::time::Instant::now();
    let out = simulate(&sc, None, |_| true).expect("simulation");
    let wall = start.elapsed().as_secs_f64();
    println!("{} events in {wall:.5} s ({:.2} M events/s)", out.events, out.events as f64 / wall / 1e6);
}
