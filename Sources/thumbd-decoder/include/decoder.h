// SPDX-License-Identifier: Apache-2.0
// thumbd-decoder's wire format (docs/threat-model.md, "The decoder sandbox"). All integers little-endian.
//
// A job (parent -> helper, on the helper's standard input):
//   u32 magic THUMBD_DECODER_JOB_MAGIC, u32 box width, u32 box height (0: the intrinsic size),
//   u32 page (of a PDF, from 1; 1...THUMBD_DECODER_MAX_PAGE), u32 DPI cap of a PDF page (1...THUMBD_DECODER_MAX_DPI),
//   u64 pixel limit, u64 source length, then the source bytes.
// An answer (helper -> parent, on its standard output):
//   u32 magic THUMBD_DECODER_ANSWER_MAGIC, u32 status (THUMBD_DECODER_OK or _REFUSED),
//   on success u32 width, u32 height, u32 bands, u32 band format (VipsBandFormat), u64 pixel bytes, the pixels;
//   on refusal u64 message length, the message (UTF-8, no NUL);
//   on THUMBD_DECODER_NO_PAGE (the page asked for is past the last) u64 8, then the u64 page count;
//   on THUMBD_DECODER_TOO_MANY_PIXELS (the source is over the job's pixel limit) u64 8, then u32 width, u32 height.
#pragma once

#define THUMBD_DECODER_JOB_MAGIC 0x626f6a74u     /* "tjob" */
#define THUMBD_DECODER_ANSWER_MAGIC 0x736e6174u  /* "tans" */
#define THUMBD_DECODER_OK 0u
#define THUMBD_DECODER_REFUSED 1u
#define THUMBD_DECODER_NO_PAGE 2u
#define THUMBD_DECODER_TOO_MANY_PIXELS 3u
#define THUMBD_DECODER_MAX_PAGE 100000u
#define THUMBD_DECODER_MAX_DPI 2400u
