//! Embeds a digest of the Rust sources the extension is built from (`_native.source_digest()`):
//! what identifies the simulator's behaviour across machines, where the compiled library's bytes
//! differ from build to build. Stores of finished runs (sweeps, reproductions) compare it to tell
//! whether a stored run came from the same simulator.

use std::fs;
use std::path::{Path, PathBuf};

/// The inputs of the simulator, relative to this crate: the crates it links and the lock file.
const INPUTS: &[&str] = &[
    "src",
    "Cargo.toml",
    "../core/src",
    "../core/data",
    "../core/Cargo.toml",
    "../live/src",
    "../live/Cargo.toml",
    "../../Cargo.lock",
];

/// FNV-1a, 64 bits: stable across Rust versions and platforms, and enough to notice a change.
fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

fn files_under(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = fs::read_dir(path)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        entries.sort();
        for entry in entries {
            files_under(&entry, out);
        }
    } else if path.is_file() {
        out.push(path.to_path_buf());
    }
}

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    for input in INPUTS {
        println!("cargo:rerun-if-changed={input}");
        let mut files = Vec::new();
        files_under(&here.join(input), &mut files);
        for file in files {
            // The path as written from this crate, so the digest does not depend on where the checkout is.
            let name = file.strip_prefix(&here).unwrap_or(&file).to_string_lossy().replace('\\', "/");
            hash = fnv1a(hash, name.as_bytes());
            hash = fnv1a(hash, &[0]);
            hash = fnv1a(hash, &fs::read(&file).unwrap_or_default());
            hash = fnv1a(hash, &[0]);
        }
    }
    println!("cargo:rustc-env=AQMLAB_SOURCE_DIGEST={hash:016x}");
}
