// SPDX-License-Identifier: Apache-2.0
// Face and feature detection with OpenCV (objdetect's cascade classifier, imgproc's good features to track) behind
// a C interface: Swift cannot import C++ headers here, and no OpenCV type may reach Swift. The implementation
// (faces.cpp) catches every C++ exception: none crosses this boundary.
//
// Ownership: pixel buffers are borrowed for the call; output arrays are the caller's (caller-allocates); an error
// text is (transfer full), released with thumbd_opencv_free.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A rectangle found by a cascade, in the grey buffer's pixels.
typedef struct ThumbdOpenCVBox {
    int x;
    int y;
    int width;
    int height;
} ThumbdOpenCVBox;

/// A corner found by good features to track, in the grey buffer's pixels (sub-pixel: OpenCV answers floats).
typedef struct ThumbdOpenCVPoint {
    double x;
    double y;
} ThumbdOpenCVPoint;

/// An 8-bit, one-band picture, borrowed: `height` rows of `width` bytes, `stride` bytes apart (>= width).
typedef struct ThumbdOpenCVGrey {
    const uint8_t *pixels;  // (transfer none)
    int width;
    int height;
    size_t stride;
} ThumbdOpenCVGrey;

/// Loads the cascade at `path` on the calling thread (and keeps it there: see thumbd_opencv_detect_faces).
/// Returns 0, or -1 with *error (transfer full) when the file is missing, unreadable or not a cascade.
int thumbd_opencv_load_cascade(const char *path, char **error);

/// Runs the cascade at `cascade_path` over `grey` (CascadeClassifier::detectMultiScale with scale_factor,
/// min_neighbours and a min_size x min_size smallest window, no largest one). With search_side above 0 and below
/// the picture's longer side, the picture is first reduced to fit search_side x search_side (area averaging) and
/// searched there (min_size is then in the reduced picture's pixels); the boxes are always in `grey`'s pixels. Writes at most `max` boxes, in the
/// order OpenCV found them, and their number (which may exceed `max`: the rest are dropped) into *count.
/// Cascades are loaded once per thread and path and kept for the thread's life: a CascadeClassifier must not run
/// on two threads at once, and render threads are long-lived. OpenCV's own worker threads are off (set once,
/// process-wide): each render thread detects on itself, as libvips runs with concurrency 1.
/// - boxes: (out caller-allocates) room for `max` boxes; may be NULL when max is 0.
/// Returns 0, or -1 with *error (transfer full): an unreadable cascade, a bad argument, an OpenCV exception.
int thumbd_opencv_detect_faces(ThumbdOpenCVGrey grey, const char *cascade_path, double scale_factor,
                               int min_neighbours, int min_size, int search_side, ThumbdOpenCVBox *boxes, int max,
                               int *count, char **error);

/// Good features to track over `grey` (Shi-Tomasi's minimum eigenvalue, no Harris, block size 3, no mask): at most
/// `max_corners` corners whose quality is at least quality_level times the best one, min_distance apart, the
/// strongest first, found on a copy reduced to fit search_side x search_side when that is above 0 and the picture is
/// larger (as thumbd_opencv_detect_faces), their positions in `grey`'s pixels (pixel centres mapped to centres).
/// Writes at most `max` of them into `points` and their number into *count.
/// - points: (out caller-allocates) room for `max` points; may be NULL when max is 0.
/// Returns 0, or -1 with *error (transfer full).
int thumbd_opencv_good_features(ThumbdOpenCVGrey grey, int max_corners, double quality_level, double min_distance,
                                int search_side, ThumbdOpenCVPoint *points, int max, int *count, char **error);

/// Releases memory handed out by these functions (an error text). NULL is allowed.
void thumbd_opencv_free(void *pointer);

#ifdef __cplusplus
}
#endif
