// SPDX-License-Identifier: Apache-2.0
#include "CVipsShims.h"

int thumbd_vips_init(const char *argv0) { return VIPS_INIT(argv0); }
