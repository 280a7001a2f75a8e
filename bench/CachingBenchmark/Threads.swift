// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// CPU time consumed by the calling thread, in nanoseconds: robust to other processes competing for
/// the two cores (wall time is not, on a shared machine).
func threadCPUNanoseconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) * 1e9 + Double(spec.tv_nsec)
}
