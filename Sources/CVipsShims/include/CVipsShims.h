// SPDX-License-Identifier: Apache-2.0
// One-call libvips jobs: every variadic, NULL-terminated option list lives here, compiled with -Wall.
#pragma once
#include <vips/vips.h>

/// VIPS_INIT, which is a macro Swift cannot import. Returns 0 on success.
int thumbd_vips_init(const char *argv0);
