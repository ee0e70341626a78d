#!/usr/bin/env bash
# Builds kbench's Debian package into target/debian/: the binary of a cargo
# profile (`dist` by default: fat LTO and stripped, the root Cargo.toml
# says why; or `release`), the man pages and shell completions that binary
# generates, then `cargo deb`, which packages those files
# (crates/kbench/Cargo.toml, [package.metadata.deb]).
# Needs cargo-deb: cargo install cargo-deb --locked --no-default-features
# Usage: .ci/deb.sh [--no-build] [--target TRIPLE] [PROFILE]
#   --no-build packages the binary already in the profile's target dir
#   (CI: `--no-build release`, the one `cargo test --workspace --release`
#   built).
#   --target packages a cross-build (.ci/aarch64.sh: the arm64 package of
#   its aarch64-unknown-linux-gnu build, whose man pages and completions
#   are written by running it under qemu-user).
set -euo pipefail
cd "$(dirname "$0")/.."

build=yes
if [ "${1:-}" = --no-build ]; then
    build=no
    shift
fi
target=()
if [ "${1:-}" = --target ]; then
    target=(--target "$2")
    shift 2
fi
profile=${1:-dist}
out=${CARGO_TARGET_DIR:-target}${target:+/${target[1]}}/$profile
if [ "$build" = yes ]; then
    cargo build --profile "$profile" -p kbench "${target[@]}"
fi
rm -rf "$out/man" "$out/completions"
"$out/kbench" man --dir "$out/man"
# Debian's man pages are gzipped; cargo-deb leaves files from the target dir as they are.
gzip -9n "$out"/man/*.1
mkdir -p "$out/completions"
"$out/kbench" completions bash >"$out/completions/kbench"
"$out/kbench" completions zsh >"$out/completions/_kbench"
"$out/kbench" completions fish >"$out/completions/kbench.fish"
cargo deb -p kbench --profile "$profile" --no-build "${target[@]}"
