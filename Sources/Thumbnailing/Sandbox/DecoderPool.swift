// SPDX-License-Identifier: Apache-2.0
import CLinuxShims
import Glibc
import Synchronization

/// The decoder sandbox's helpers (`thumbd-decoder`, docs/threat-model.md): processes that hold libvips's untrusted
/// loaders behind seccomp and resource limits, started once and re-used for many jobs, so that an SVG, PDF, JPEG XL,
/// BMP or ICO source is decoded outside thumbd's address space.
///
/// Each helper is started with `posix_spawn` with two pipes (its standard input and output; every other descriptor
/// of thumbd is closed in the child, the pool's own ends are close-on-exec). A job is written and its answer read
/// with `poll` against a wall-clock deadline: past it, the helper is killed with `SIGKILL` and reaped. A helper that
/// dies (a crash, its CPU or memory limit, the seccomp filter) is reaped and counted; one that has served
/// `jobsPerHelper` jobs ends by itself and is reaped. A new one is started when a job finds no idle helper, so the
/// pool never waits for a replacement before the next job. Blocking: call ``decode(_:box:pixelLimit:)`` on a render
/// thread only, never on an event loop or the cooperative pool. Any number of threads may call it at once (each job
/// has a helper of its own; `helpers` of them are kept idle between jobs).
package final class DecoderPool: Sendable {
    /// How many helpers, how long they live, what they may use.
    package struct Configuration: Sendable, Hashable {
        /// The helper executable.
        package var executable: String
        /// Helpers kept started between jobs (`image.sandbox_helpers`).
        package var helpers = 2
        /// Jobs a helper serves before it is replaced (`image.sandbox_jobs_per_helper`).
        package var jobsPerHelper = 100
        /// Wall-clock time one job may take, writing the source to reading the raster (`image.sandbox_deadline`).
        package var deadline: Duration = .seconds(10)
        /// The helper's address-space limit in MiB (`image.sandbox_memory`).
        package var memoryMiB = 1024
        /// Extra arguments (tests only: `--test-loop-on-magic`).
        package var extraArguments: [String] = []

        /// A pool of `executable` with the default limits.
        package init(executable: String) { self.executable = executable }
    }

    /// What a job came to, for the counters (`thumbd_sandbox_jobs_total{result}`).
    package enum Outcome: Int, Sendable, CaseIterable {
        /// A raster came back.
        case ok
        /// The helper died before answering (a crash, its CPU or memory limit, the seccomp filter).
        case crashed
        /// The deadline passed; the helper was killed.
        case timeout
        /// The helper refused the source (unreadable, over the pixel limit) with a message.
        case refused

        /// The label value.
        package var label: String {
            switch self {
            case .ok: "ok"
            case .crashed: "crashed"
            case .timeout: "timeout"
            case .refused: "refused"
            }
        }
    }

    /// Why a job gave no raster.
    package enum DecodeError: Error, Sendable, Hashable {
        /// The helper refused the source; its message.
        case refused(String)
        /// The helper died; how (for logs).
        case crashed(String)
        /// The deadline passed.
        case timedOut
        /// No helper could be started (errno of the call that failed).
        case unavailable(String)
        /// The page asked for is past the source's last; the page count (1 for a source without pages).
        case noSuchPage(pages: Int)
        /// The source is over the job's pixel limit: its size.
        case tooManyPixels(width: Int, height: Int)
    }

    /// The largest page a job may ask for (THUMBD_DECODER_MAX_PAGE).
    package static let maxPage = 100_000
    /// The DPI caps a job may carry (THUMBD_DECODER_MAX_DPI).
    package static let dpiRange = 1...2400

    /// A decoded picture: `bands` interleaved bands of VipsBandFormat `bandFormat`.
    package struct Raster: Sendable {
        package var width: Int
        package var height: Int
        package var bands: Int
        package var bandFormat: Int
        package var pixels: [UInt8]
    }

    /// The configuration the pool was started with.
    package let configuration: Configuration
    private let idle = Mutex<[Helper]>([])
    private let counts = Mutex<[Int]>(Array(repeating: 0, count: Outcome.allCases.count))
    private let started = Atomic<Int>(0)

    /// Why a pool could not start.
    package struct StartError: Error, CustomStringConvertible {
        /// What is wrong, for the startup log.
        package let description: String
    }

    /// Checks the executable and starts `configuration.helpers` helpers.
    /// - Throws: `StartError` when the executable is missing or a helper cannot be started.
    package init(configuration: Configuration) throws(StartError) {
        self.configuration = configuration
        guard access(configuration.executable, X_OK) == 0 else {
            throw StartError(
                description: "the decoder sandbox's helper \(configuration.executable) is missing or not executable "
                    + "(build the thumbd-decoder product next to thumbd, or set image.sandbox: off)")
        }
        var helpers: [Helper] = []
        for _ in 0..<max(configuration.helpers, 0) {
            switch spawn() {
            case .success(let helper): helpers.append(helper)
            case .failure(let error):
                for helper in helpers { helper.retire() }
                throw StartError(description: "the decoder sandbox's helper could not start: \(error)")
            }
        }
        idle.withLock { $0 = helpers }
    }

    deinit {
        for helper in idle.withLock({ $0 }) { helper.retire() }
    }

    /// The directory holding this process's executable (`/proc/self/exe`), where `thumbd-decoder` is installed.
    package static var executableDirectory: String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }

    /// How many jobs came to `outcome` since the start.
    package func count(_ outcome: Outcome) -> Int { counts.withLock { $0[outcome.rawValue] } }

    /// Helpers started since the start (the first `helpers` included).
    package var helpersStarted: Int { started.load(ordering: .relaxed) }

    /// The process ids of the idle helpers (tests).
    package var idleHelperIDs: [Int32] { idle.withLock { $0.map(\.pid) } }

    /// Decodes `source` in a helper: a vector source rendered to fit `box` (0, 0: its own size), any source refused
    /// above `pixelLimit` pixels before it is decoded. A PDF: its page `page` (from 1), rasterised at the DPI that
    /// fits the box, at most `maxDPI`, lowered to stay within `pixelLimit`. Blocks for the job (a render thread).
    /// - Throws: `DecodeError` (`.noSuchPage` for a page past the last, `.refused` for a page or cap out of range).
    package func decode(
        _ source: UnsafeRawBufferPointer, box: (width: Int, height: Int), page: Int = 1, maxDPI: Int = 300,
        pixelLimit: Int
    ) throws(DecodeError) -> Raster {
        guard (1...Self.maxPage).contains(page) else { throw .refused("page \(page) out of range") }
        guard Self.dpiRange.contains(maxDPI) else { throw .refused("DPI cap \(maxDPI) out of range") }
        var helper: Helper
        if let kept = idle.withLock({ $0.popLast() }) {
            helper = kept
        } else {
            switch spawn() {
            case .success(let made): helper = made
            case .failure(let error): throw error
            }
        }
        var result = helper.run(
            job: Self.job(source, box: box, page: page, maxDPI: maxDPI, pixelLimit: pixelLimit),
            deadline: configuration.deadline,
            pixelLimit: pixelLimit)
        let outcome: Outcome
        switch result {
        case .success: outcome = .ok
        case .failure(.refused), .failure(.noSuchPage), .failure(.tooManyPixels): outcome = .refused
        case .failure(.timedOut): outcome = .timeout
        case .failure: outcome = .crashed
        }
        counts.withLock { $0[outcome.rawValue] += 1 }
        helper.jobs += 1
        if outcome == .ok || outcome == .refused, helper.jobs < configuration.jobsPerHelper {
            let kept = idle.withLock { helpers -> Bool in
                guard helpers.count < configuration.helpers else { return false }
                helpers.append(helper)
                return true
            }
            if !kept { helper.retire() }
        } else {
            // Killed (when still running) and reaped now, whatever happened: never a zombie.
            let ended = helper.retire()
            if case .failure(.crashed(let why)) = result { result = .failure(.crashed(why.isEmpty ? ended : why)) }
        }
        return try result.get()
    }

    /// The job's bytes (Sources/thumbd-decoder/include/decoder.h).
    private static func job(
        _ source: UnsafeRawBufferPointer, box: (width: Int, height: Int), page: Int, maxDPI: Int, pixelLimit: Int
    ) -> [UInt8] {
        var job: [UInt8] = []
        job.reserveCapacity(36 + source.count)
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { job += $0 } }
        append(UInt32(0x626f_6a74))
        append(UInt32(clamping: box.width))
        append(UInt32(clamping: box.height))
        append(UInt32(clamping: page))
        append(UInt32(clamping: maxDPI))
        append(UInt64(clamping: pixelLimit))
        append(UInt64(source.count))
        job += source
        return job
    }

    /// Starts one helper.
    private func spawn() -> Result<Helper, DecodeError> {
        var input: [Int32] = [0, 0]
        var output: [Int32] = [0, 0]
        guard thumbd_pipe_cloexec(&input) == 0 else { return .failure(.unavailable("pipe2: errno \(errno)")) }
        guard thumbd_pipe_cloexec(&output) == 0 else {
            close(input[0])
            close(input[1])
            return .failure(.unavailable("pipe2: errno \(errno)"))
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on 0 and 1; everything from 3 up is closed (the helper closes them again).
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        _ = thumbd_spawn_close_from(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        thumbd_spawn_default_signals(&attributes)

        // The CPU limit is for the helper's life: a job's CPU is mostly its wall-clock time (one job at a time, libvips
        // at concurrency 1; some codecs run threads of their own), so jobs x deadline is a backstop behind the
        // deadline.
        let deadlineSeconds = Int(configuration.deadline.components.seconds) + 1
        let cpuSeconds = max(1, configuration.jobsPerHelper) * deadlineSeconds + 1
        let arguments =
            [
                configuration.executable, "--jobs", String(configuration.jobsPerHelper), "--cpu-seconds",
                String(cpuSeconds), "--memory-mb", String(configuration.memoryMiB),
            ] + configuration.extraArguments
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let rc = argv.withUnsafeBufferPointer { pointers in
            posix_spawn(
                &pid, configuration.executable, &actions, &attributes,
                UnsafeMutablePointer(mutating: pointers.baseAddress!), environ)
        }
        close(input[0])
        close(output[1])
        guard rc == 0 else {
            close(input[1])
            close(output[0])
            return .failure(.unavailable("posix_spawn \(configuration.executable): errno \(rc)"))
        }
        // The pool's ends never block: a job polls them against its deadline.
        _ = fcntl(input[1], F_SETFL, fcntl(input[1], F_GETFL) | O_NONBLOCK)
        _ = fcntl(output[0], F_SETFL, fcntl(output[0], F_GETFL) | O_NONBLOCK)
        started.add(1, ordering: .relaxed)
        return .success(Helper(pid: pid, input: input[1], output: output[0]))
    }
}

/// One helper process: its id, the write end of its input, the read end of its output, the jobs it served.
private struct Helper: Sendable {
    let pid: pid_t
    let input: Int32
    let output: Int32
    var jobs = 0

    /// Closes the pipes, kills the helper (a no-op when it ended by itself) and reaps it; says how it ended.
    @discardableResult
    func retire() -> String {
        close(input)
        close(output)
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WTERMSIG / WEXITSTATUS are macros: spelled out.
        let signal = status & 0x7f
        return signal == 0
            ? "the helper exited with status \((status >> 8) & 0xff)" : "the helper died of signal \(signal)"
    }

    /// Writes `job`, reads the answer, all before `deadline` from now.
    func run(job: [UInt8], deadline: Duration, pixelLimit: Int) -> Result<DecoderPool.Raster, DecoderPool.DecodeError> {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: deadline)
        var written = 0
        var answer: [UInt8] = []
        var expected = 8  // the magic and the status, then more once they are known
        var chunk = [UInt8](repeating: 0, count: 65536)
        while answer.count < expected {
            let left = clock.now.duration(to: end)
            guard left > .zero else { return .failure(.timedOut) }
            let (seconds, attoseconds) = left.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var fds = [pollfd(fd: output, events: Int16(POLLIN), revents: 0)]
            if written < job.count { fds.append(pollfd(fd: input, events: Int16(POLLOUT), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                return .failure(.crashed("poll: errno \(errno)"))
            }
            if ready == 0 { continue }
            if fds.count > 1, fds[1].revents != 0 {
                let count = job.withUnsafeBytes { write(input, $0.baseAddress! + written, $0.count - written) }
                if count > 0 {
                    written += count
                } else if count < 0 && errno != EAGAIN && errno != EINTR {
                    return .failure(.crashed(""))  // EPIPE: the helper is gone
                }
            }
            if fds[0].revents != 0 {
                let count = read(output, &chunk, min(chunk.count, expected - answer.count))
                if count > 0 {
                    answer += chunk[..<count]
                } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
                    return .failure(.crashed(""))
                }
            }
            // The answer's length, as its parts arrive.
            guard answer.count == expected else { continue }
            switch Self.next(answer, pixelLimit: pixelLimit) {
            case .more(let total): expected = total
            case .invalid(let why): return .failure(.crashed(why))
            case .done: break
            }
        }
        return Self.parse(answer)
    }

    private enum Progress { case more(Int), invalid(String), done }

    private static func integer(_ bytes: [UInt8], _ offset: Int, _ size: Int) -> UInt64 {
        (0..<size).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) }
    }

    /// How long the answer is, given its first `answer.count` bytes.
    private static func next(_ answer: [UInt8], pixelLimit: Int) -> Progress {
        guard integer(answer, 0, 4) == 0x736e_6174 else { return .invalid("answer without its magic") }
        let ok = integer(answer, 4, 4) == 0
        switch (ok, answer.count) {
        case (true, 8): return .more(32)
        case (false, 8): return .more(16)
        case (true, 32):
            let length = integer(answer, 24, 8)
            // At most the pixel limit's worth of 4 bands of doubles.
            guard length <= UInt64(pixelLimit) * 32 else { return .invalid("raster of \(length) bytes") }
            return length == 0 ? .done : .more(32 + Int(length))
        case (false, 16):
            let length = integer(answer, 8, 8)
            guard length <= 4096 else { return .invalid("refusal of \(length) bytes") }
            return length == 0 ? .done : .more(16 + Int(length))
        default: return .done
        }
    }

    private static func parse(_ answer: [UInt8]) -> Result<DecoderPool.Raster, DecoderPool.DecodeError> {
        if integer(answer, 4, 4) == 2 {
            // THUMBD_DECODER_NO_PAGE: the page count, bounded like a page.
            guard answer.count == 24 else { return .failure(.crashed("page count of \(answer.count - 16) bytes")) }
            return .failure(.noSuchPage(pages: Int(min(integer(answer, 16, 8), UInt64(DecoderPool.maxPage)))))
        }
        if integer(answer, 4, 4) == 3 {
            // THUMBD_DECODER_TOO_MANY_PIXELS: the source's width and height.
            guard answer.count == 24 else { return .failure(.crashed("source size of \(answer.count - 16) bytes")) }
            return .failure(.tooManyPixels(width: Int(integer(answer, 16, 4)), height: Int(integer(answer, 20, 4))))
        }
        if integer(answer, 4, 4) != 0 {
            return .failure(.refused(String(decoding: answer[16...], as: UTF8.self)))
        }
        return .success(
            DecoderPool.Raster(
                width: Int(integer(answer, 8, 4)), height: Int(integer(answer, 12, 4)),
                bands: Int(integer(answer, 16, 4)), bandFormat: Int(integer(answer, 20, 4)),
                pixels: Array(answer[32...])))
    }
}
