// SPDX-License-Identifier: Apache-2.0
// Benchmark-only server: see BenchServer.swift and bench/http.sh.
BenchServer.run()
