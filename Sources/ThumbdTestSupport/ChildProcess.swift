// SPDX-License-Identifier: Apache-2.0
import CLinuxShims
import Glibc
import Synchronization

/// A child process for tests that need a real, separate program: `kill -9` in the middle of its work, a
/// restart on the same files, the time a cold start takes.
///
/// Started with `posix_spawn` (no `fork` of the multi-threaded test process): standard input is
/// `/dev/null`, standard output and error go to files in a temporary directory of its own, every other
/// descriptor is closed, and the signal mask and dispositions are reset (the test runner's are not the
/// child's business). Released, it is killed with `SIGKILL` and reaped, so a failing test leaves no
/// process behind; a test that wants a graceful stop sends `SIGTERM` and ``wait(timeout:)``s first.
///
/// ```swift
/// let thumbd = try ChildProcess(executable: ChildProcess.builtExecutable(named: "thumbd"), arguments: ["--port", "0"])
/// let line = thumbd.waitForStandardError(containing: "listening", timeout: .seconds(10))
/// thumbd.kill(SIGKILL)
/// #expect(thumbd.wait(timeout: .seconds(5)) == .signalled(SIGKILL))
/// ```
package final class ChildProcess: Sendable {
    /// How a child ended.
    package enum Termination: Sendable, Equatable, CustomStringConvertible {
        /// `exit(status)`.
        case exited(Int32)
        /// Killed by a signal.
        case signalled(Int32)

        /// `exited(0)`, `signalled(9)`.
        package var description: String {
            switch self {
            case .exited(let status): "exited(\(status))"
            case .signalled(let signal): "signalled(\(signal))"
            }
        }
    }

    /// Why a child could not be started, or its executable not found.
    package enum SpawnError: Error, Equatable, CustomStringConvertible {
        /// A call failed with `errno` (`posix_spawn` returns it).
        case system(call: String, errno: Int32)
        /// The executable is not where the build puts it.
        case executableNotBuilt(path: String)

        /// The message a failing test shows.
        package var description: String {
            switch self {
            case .system(let call, let code):
                "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
            case .executableNotBuilt(let path):
                "no executable at \(path): build it first (`swift build`, or `swift build --build-tests`, which "
                    + "builds every product next to the test bundle), or set THUMBD_TEST_EXECUTABLE_DIR"
            }
        }
    }

    /// The child's process id (never reused while this object lives: only this object reaps it).
    package let pid: Int32
    /// The directory holding `stdout` and `stderr`, removed with this object.
    package let outputDirectory: TempDirectory
    /// Set once the child has been reaped. Signals are sent under this lock, so none can reach a
    /// recycled pid.
    private let termination = Mutex<Termination?>(nil)

    /// Starts `executable` with `arguments` (without argv[0]) and `environment`, added to this process's
    /// environment (winning over inherited values) unless `inheritsEnvironment` is false.
    /// - Throws: ``SpawnError`` when the output files or the process cannot be created.
    package init(
        executable: String, arguments: [String] = [], environment: [String: String] = [:],
        inheritsEnvironment: Bool = true
    ) throws {
        outputDirectory = try TempDirectory(prefix: "thumbd-child")
        let outputPath = outputDirectory.appending("stdout")
        let errorPath = outputDirectory.appending("stderr")

        var inherited: [String: String] = [:]
        var entry = environ
        while inheritsEnvironment, let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                inherited[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        let merged = inherited.merging(environment) { _, added in added }
        let argv = CStringArray([executable] + arguments)
        let envp = CStringArray(merged.map { "\($0.key)=\($0.value)" }.sorted())

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        // The test process holds sockets, databases and flock'ed files; not every one is close-on-exec.
        _ = thumbd_spawn_close_from(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        thumbd_spawn_default_signals(&attributes)

        var child: Int32 = 0
        let rc = posix_spawn(&child, executable, &actions, &attributes, argv.pointers, envp.pointers)
        guard rc == 0 else { throw SpawnError.system(call: "posix_spawn \(executable)", errno: rc) }
        pid = child
    }

    deinit {
        termination.withLock { termination in
            guard termination == nil else { return }
            Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
    }

    /// Sends `signal` unless the child has already been reaped. Returns whether it was sent.
    @discardableResult
    package func kill(_ signal: Int32) -> Bool {
        termination.withLock { termination in
            termination == nil && Glibc.kill(pid, signal) == 0
        }
    }

    /// How the child ended, if it has (reaps it without waiting).
    package var exitStatus: Termination? {
        termination.withLock { termination in
            if termination == nil { termination = Self.reap(pid) }
            return termination
        }
    }

    /// Waits up to `timeout` for the child to end (polling every 2 ms); nil if it is still running.
    /// Blocks the calling thread.
    package func wait(timeout: Duration) -> Termination? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let ended = exitStatus { return ended }
            if ContinuousClock.now >= deadline { return nil }
            usleep(2_000)
        }
    }

    /// Polls (every 20 ms, up to `timeout`) until something accepts a connection on 127.0.0.1:`port`: true then;
    /// false when the child ended or the time ran out first. Blocks the calling thread.
    package func waitUntilAccepting(port: Int, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while exitStatus == nil && ContinuousClock.now < deadline {
            if let client = try? RawHTTPClient(host: "127.0.0.1", port: port) {
                client.close()
                return true
            }
            usleep(20_000)
        }
        return false
    }

    /// What the child wrote to standard output so far.
    package var standardOutput: String { Self.read(outputDirectory.appending("stdout")) }

    /// What the child wrote to standard error so far.
    package var standardError: String { Self.read(outputDirectory.appending("stderr")) }

    /// Polls standard error (every 5 ms, up to `timeout`) for a line containing `text`; returns the first
    /// such line, or nil if none appeared in time or the child ended without writing one. Blocks the
    /// calling thread.
    package func waitForStandardError(containing text: String, timeout: Duration) -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let ended = exitStatus != nil
            if let line = standardError.split(separator: "\n").first(where: { $0.contains(text) }) {
                return String(line)
            }
            if ended || ContinuousClock.now >= deadline { return nil }
            usleep(5_000)
        }
    }

    // MARK: - Locating built products

    /// The path of the executable product `name` built with the tests.
    ///
    /// `swift build --build-tests` and `swift test` put every product of the package into one directory
    /// (`.build/<triple>/debug`), the one that holds the test bundle this process runs from, so the
    /// directory of `/proc/self/exe` is where `thumbd` is. `THUMBD_TEST_EXECUTABLE_DIR` overrides that
    /// directory (a release build, an installed binary).
    /// - Throws: ``SpawnError/executableNotBuilt(path:)`` when no executable is there: a missing binary
    ///   is a build problem to report, not a reason to skip.
    package static func builtExecutable(named name: String) throws(SpawnError) -> String {
        let directory: String
        if let override = getenv("THUMBD_TEST_EXECUTABLE_DIR") {
            directory = String(cString: override)
        } else {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
            guard length > 0 else { throw .system(call: "readlink /proc/self/exe", errno: errno) }
            let path = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        }
        let candidate = "\(directory)/\(name)"
        guard access(candidate, X_OK) == 0 else { throw .executableNotBuilt(path: candidate) }
        return candidate
    }

    // MARK: - Internals

    private static func reap(_ pid: Int32) -> Termination? {
        var status: Int32 = 0
        var result: pid_t
        repeat {
            result = waitpid(pid, &status, WNOHANG)
        } while result < 0 && errno == EINTR
        guard result == pid else { return nil }
        // WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift cannot import; these are their glibc definitions.
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }

    private static func read(_ path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A NULL-terminated `char *[]` (argv, envp) whose strings live as long as this value.
private final class CStringArray {
    let pointers: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    private let count: Int

    init(_ strings: [String]) {
        count = strings.count
        pointers = .allocate(capacity: strings.count + 1)
        for (index, string) in strings.enumerated() { pointers[index] = strdup(string) }
        pointers[strings.count] = nil
    }

    deinit {
        for index in 0..<count { free(pointers[index]) }
        pointers.deallocate()
    }
}
