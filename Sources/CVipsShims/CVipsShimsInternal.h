// SPDX-License-Identifier: Apache-2.0
// Declarations shared by the shim's C files; not part of the Swift-visible interface.
#pragma once

#include <vips/vips.h>

#include "CVipsShims.h"

// vips_thumbnail's "no bound on this side": the maximum of its width/height arguments (VIPS_MAX_COORD).
#define THUMBD_UNBOUNDED 10000000

// Finds the loader for buffer, checks its format against allowed_sources (a bit per ThumbdVipsFormat) and
// opens the header; no pixels are decoded. On THUMBD_VIPS_STEP_OK, *header is a new reference (transfer
// full, release with g_object_unref) that borrows buffer, and *format is the source format (HEIF refined to
// AVIF when the file is AV1). *loader is the static class name of the loader found, or NULL. On failure,
// *header is NULL and the reason is in libvips's error buffer.
ThumbdVipsStep thumbd_vips_open_header(const void *buffer, size_t length, uint32_t allowed_sources,
                                       VipsImage **header, ThumbdVipsFormat *format, const char **loader);
