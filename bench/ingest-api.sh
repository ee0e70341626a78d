#!/usr/bin/env bash
# Ingest through the push API into PostgreSQL: a throwaway cluster
# (.ci/postgres.sh), a server in process, 4 threads pushing 40 documents of
# 10,000 samples, 3 repetitions; prints the median samples/s. Settings:
# INGEST_DOCS, INGEST_SAMPLES, INGEST_THREADS, INGEST_REPS (see
# crates/kbench-server/examples/ingest_api.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p kbench-server --example ingest_api
exec bash .ci/postgres.sh target/release/examples/ingest_api
