// SPDX-License-Identifier: Apache-2.0
// Face and feature detection with OpenCV (see include/CFaceShims.h). Every function catches cv::Exception and
// std::exception (and anything else) and answers -1 with the text: no exception crosses the C boundary.
#include "CFaceShims.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

namespace {

// A malloc'ed copy of `text` for the caller (transfer full, thumbd_opencv_free).
char *copy_text(const std::string &text) {
    char *copy = static_cast<char *>(std::malloc(text.size() + 1));
    if (copy) std::memcpy(copy, text.c_str(), text.size() + 1);
    return copy;
}

int fail(char **error, const std::string &text) {
    if (error) *error = copy_text(text);
    return -1;
}

// OpenCV's parallel_for_ would start a pool of its own threads; thumbd's parallelism is its render threads (one
// detection each), so OpenCV runs on the calling thread. Process-wide, set once.
void run_on_calling_thread() {
    static std::once_flag once;
    std::call_once(once, [] { cv::setNumThreads(0); });
}

// The cascades this thread has loaded, by path, kept until the thread ends. detectMultiScale mutates the
// classifier's internal buffers, so a classifier is never shared between threads; render threads live long, so
// each loads a cascade once. A failed load is not kept (the next call tries again).
cv::CascadeClassifier *cascade_for(const std::string &path, std::string &problem) {
    thread_local std::map<std::string, std::unique_ptr<cv::CascadeClassifier>> cascades;
    auto found = cascades.find(path);
    if (found != cascades.end()) return found->second.get();
    auto cascade = std::make_unique<cv::CascadeClassifier>();
    if (!cascade->load(path) || cascade->empty()) {
        problem = "cannot load the cascade " + path;
        return nullptr;
    }
    cv::CascadeClassifier *loaded = cascade.get();
    cascades.emplace(path, std::move(cascade));
    return loaded;
}

// The borrowed grey buffer as a matrix header (no copy). OpenCV's constructor takes a non-const pointer; the
// functions below only read it.
bool grey_matrix(const ThumbdOpenCVGrey &grey, cv::Mat &matrix, std::string &problem) {
    if (!grey.pixels || grey.width <= 0 || grey.height <= 0 || grey.stride < static_cast<size_t>(grey.width)) {
        problem = "no grey pixels, or a stride narrower than a row";
        return false;
    }
    matrix = cv::Mat(grey.height, grey.width, CV_8UC1, const_cast<uint8_t *>(grey.pixels), grey.stride);
    return true;
}

/// `matrix` reduced to fit search_side x search_side by area averaging when it is larger (search_side above 0), with
/// the factors from the reduced picture's pixels back to `matrix`'s; `matrix` itself otherwise.
cv::Mat reduced(const cv::Mat &matrix, int search_side, double &kx, double &ky) {
    kx = ky = 1;
    const int longer = std::max(matrix.cols, matrix.rows);
    if (search_side <= 0 || longer <= search_side) return matrix;
    const double k = static_cast<double>(longer) / search_side;
    const int w = std::max(1, static_cast<int>(matrix.cols / k + 0.5));
    const int h = std::max(1, static_cast<int>(matrix.rows / k + 0.5));
    cv::Mat smaller;
    cv::resize(matrix, smaller, cv::Size(w, h), 0, 0, cv::INTER_AREA);
    kx = static_cast<double>(matrix.cols) / w;
    ky = static_cast<double>(matrix.rows) / h;
    return smaller;
}

/// Runs `body`, turning any C++ exception into -1 with its text in *error: none may cross the C boundary.
template <typename Body>
int guarded(char **error, Body body) {
    try {
        return body();
    } catch (const cv::Exception &exception) {
        return fail(error, std::string("OpenCV: ") + exception.what());
    } catch (const std::exception &exception) {
        return fail(error, exception.what());
    } catch (...) {
        return fail(error, "unknown C++ exception");
    }
}

}  // namespace

extern "C" int thumbd_opencv_load_cascade(const char *path, char **error) {
    if (error) *error = nullptr;
    return guarded(error, [&]() -> int {
        if (!path) return fail(error, "no cascade path");
        run_on_calling_thread();
        std::string problem;
        if (!cascade_for(path, problem)) return fail(error, problem);
        return 0;
    });
}

extern "C" int thumbd_opencv_detect_faces(ThumbdOpenCVGrey grey, const char *cascade_path, double scale_factor,
                                          int min_neighbours, int min_size, int search_side, ThumbdOpenCVBox *boxes,
                                          int max, int *count, char **error) {
    if (error) *error = nullptr;
    if (count) *count = 0;
    return guarded(error, [&]() -> int {
        if (!cascade_path || !count || max < 0 || (max > 0 && !boxes)) return fail(error, "bad arguments");
        if (!(scale_factor > 1) || min_neighbours < 0 || min_size < 0)
            return fail(error, "scale factor at most 1, or negative neighbours or size");
        run_on_calling_thread();
        std::string problem;
        cv::Mat matrix;
        if (!grey_matrix(grey, matrix, problem)) return fail(error, problem);
        cv::CascadeClassifier *cascade = cascade_for(cascade_path, problem);
        if (!cascade) return fail(error, problem);
        // A cascade's cost grows with the pixels searched: a smaller copy finds the same faces (down to min_size
        // of its own pixels) several times faster.
        double k = 1, ky = 1;
        const cv::Mat searched = reduced(matrix, search_side, k, ky);
        std::vector<cv::Rect> found;
        cascade->detectMultiScale(searched, found, scale_factor, min_neighbours, 0, cv::Size(min_size, min_size));
        *count = static_cast<int>(found.size());
        for (int i = 0; i < max && i < *count; i++) {
            const cv::Rect &r = found[static_cast<size_t>(i)];
            const int left = static_cast<int>(r.x * k + 0.5), top = static_cast<int>(r.y * ky + 0.5);
            boxes[i] = ThumbdOpenCVBox{left, top, static_cast<int>((r.x + r.width) * k + 0.5) - left,
                                       static_cast<int>((r.y + r.height) * ky + 0.5) - top};
        }
        return 0;
    });
}

extern "C" int thumbd_opencv_good_features(ThumbdOpenCVGrey grey, int max_corners, double quality_level,
                                           double min_distance, int search_side, ThumbdOpenCVPoint *points, int max,
                                           int *count, char **error) {
    if (error) *error = nullptr;
    if (count) *count = 0;
    return guarded(error, [&]() -> int {
        if (!count || max < 0 || (max > 0 && !points)) return fail(error, "bad arguments");
        if (max_corners < 0 || !(quality_level > 0) || min_distance < 0)
            return fail(error, "negative corners or distance, or a quality level not above 0");
        run_on_calling_thread();
        std::string problem;
        cv::Mat matrix;
        if (!grey_matrix(grey, matrix, problem)) return fail(error, problem);
        std::vector<cv::Point2f> corners;
        double kx = 1, ky = 1;
        // OpenCV reads maxCorners <= 0 as "no limit"; 0 asked means none.
        if (max_corners > 0) {
            const cv::Mat searched = reduced(matrix, search_side, kx, ky);
            cv::goodFeaturesToTrack(searched, corners, max_corners, quality_level, min_distance, cv::noArray(), 3,
                                    false);
        }
        *count = static_cast<int>(corners.size());
        for (int i = 0; i < max && i < *count; i++) {
            // A corner is a pixel centre: centres map to centres.
            const cv::Point2f &p = corners[static_cast<size_t>(i)];
            points[i] = ThumbdOpenCVPoint{(p.x + 0.5) * kx - 0.5, (p.y + 0.5) * ky - 0.5};
        }
        return 0;
    });
}

extern "C" void thumbd_opencv_free(void *pointer) { std::free(pointer); }
