// SPDX-License-Identifier: Apache-2.0
//
// Caching benchmarks. Run in release: `THUMBD_BENCH=1 swift run -c release --scratch-path .build-bench CachingBenchmark [scratch-dir]`.
// The scratch directory (default /tmp) decides which file system the disk figures describe.

let arguments = CommandLine.arguments
let base = arguments.count > 1 ? arguments[1] : "/tmp"
let only = arguments.count > 2 ? arguments[2] : "all"

do {
    if only == "all" || only == "memory" { try Benchmarks.memory() }
    if only == "memget" { try Benchmarks.memoryGetOnly() }
    if only == "all" || only == "checksum" { Benchmarks.checksum() }
    if only == "all" || only == "disk" { try Benchmarks.disk(base: base) }
    if only == "all" || only == "reopen" { try Benchmarks.reopen(base: base, entries: 100_000) }
} catch {
    print("benchmark failed: \(error)")
}
