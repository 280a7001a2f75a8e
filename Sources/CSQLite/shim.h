// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <sqlite3.h>

// syncfs(2) (glibc >= 2.14, Linux >= 2.6.39) is declared by <unistd.h> only under _GNU_SOURCE, which
// Swift's Glibc module does not define. The Caching module uses it to make a batch of freshly written
// blob files durable with one call instead of one fsync per file. No pointers are involved.
extern int syncfs(int fd);
