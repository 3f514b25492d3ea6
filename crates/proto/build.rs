//! Compiles `proto/` with protox (pure Rust, no `protoc`) and generates the tonic code.

use std::{env, path::PathBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut compiler = protox::Compiler::new([&root])?;
    compiler
        .include_source_info(true)
        .include_imports(true)
        .open_files(["tourney/v1/tourney.proto"])?;
    let out = PathBuf::from(env::var("OUT_DIR")?);
    std::fs::write(
        out.join("tourney_descriptor.bin"),
        compiler.encode_file_descriptor_set(),
    )?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(compiler.file_descriptor_set())?;
    Ok(())
}
