// SPDX-License-Identifier: Apache-2.0
// Layer 5, the pipeline: THE list of steps after the resize (pipeline.c), one table run by a still, by a render
// from an intermediate and by every frame of an animation, and a still's output (format check, metadata,
// encode). Includes only the steps (layer 4) and the codecs (layer 2).
#pragma once

#include "codecs.h"
#include "steps.h"

// A row of the table: the step's name (for logs and docs), whether the job wants it, what it does, whether
// its result is lazy enough to be worth computing once (the memory row) before the output is read again, and
// the filter it is when a plan orders its filters (THUMBD_VIPS_FILTER_NONE for the fixed rows).
typedef struct ThumbdStepRow {
    const char *name;
    ThumbdStepWanted wanted;
    ThumbdStepRun run;
    int lazy;
    ThumbdVipsFilter filter;
} ThumbdStepRow;

// Runs every wanted row over *image (transfer full in and out; on failure still the caller's). Returns
// THUMBD_VIPS_STEP_OK or the step to report.
ThumbdVipsStep thumbd_pipeline_run(ThumbdJob *job, VipsImage **image);

// A still's whole ending: the table over `image` (transfer full: always released, private, in memory or lazy
// over memory), the format's size limit, metadata, encode into job->result. Clears libvips's error buffer on
// success; on failure result->error_detail has it.
ThumbdVipsStep thumbd_pipeline_still(ThumbdJob *job, VipsImage *image);
