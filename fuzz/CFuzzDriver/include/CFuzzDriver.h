// SPDX-License-Identifier: Apache-2.0
// Starts libFuzzer from a Swift executable. SwiftPM links executables with `main` aliased to
// `<Target>_main`, so libFuzzer's own `main` is never used; the Swift entry point calls this
// instead, which hands libFuzzer the Swift `LLVMFuzzerTestOneInput`.
#pragma once

/// Runs libFuzzer's driver with the process arguments (borrowed) and returns its exit status.
int thumbd_fuzz_run(int argc, char **argv);
