// SPDX-License-Identifier: Apache-2.0
#include "CFuzzDriver.h"

#include <stddef.h>
#include <stdint.h>

// Provided by libFuzzer (-sanitize=fuzzer) and by the Swift fuzz target (@_cdecl).
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int thumbd_fuzz_run(int argc, char **argv) { return LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput); }
