// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import ThumbdTestSupport

/// Headless Chromium (Debian's `chromium` package, which `make test` installs) run once per page load as a
/// child process: `--dump-dom` prints the DOM after the page's scripts ran, `--screenshot` writes a PNG.
///
/// Each run is bounded (``timeout``; killed after it) and gets its own profile directory. A missing browser
/// is a failure with the fix in the message, never a skip: the page tests would otherwise pass by not running.
struct Chromium {
    /// What one run left behind.
    struct Run {
        /// Standard output (the DOM for `--dump-dom`).
        var output: String
        /// Standard error: Chromium's log, with one `CONSOLE` line per console message of the page.
        var log: String

        /// Log lines that show a problem in the page: any console message (the pages write none of their
        /// own, so each one is an error, a warning or a CSP report), an uncaught exception, a CSP violation.
        var pageProblems: [String] {
            log.split(separator: "\n").map(String.init).filter {
                $0.contains(":CONSOLE") || $0.contains("Uncaught") || $0.contains("Content Security Policy")
                    || $0.contains("Content-Security-Policy")
            }
        }
    }

    /// Why Chromium could not be used.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Longest run before the browser is killed.
    static let timeout: Duration = .seconds(60)

    /// The browser: `$THUMBD_CHROMIUM`, else `chromium` or `chromium-browser` on the usual paths.
    static func executable() throws -> String {
        if let override = ProcessInfo.processInfo.environment["THUMBD_CHROMIUM"] {
            guard access(override, X_OK) == 0 else {
                throw Failure(description: "THUMBD_CHROMIUM=\(override) is not executable")
            }
            return override
        }
        for candidate in ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/local/bin/chromium"]
        where access(candidate, X_OK) == 0 {
            return candidate
        }
        throw Failure(
            description: "headless Chromium is needed for the page tests and was not found: run `make test` (it "
                + "installs Debian's chromium package), or `apt-get install --no-install-recommends chromium`, or set "
                + "THUMBD_CHROMIUM to a Chromium binary")
    }

    /// Loads `url` and returns the DOM after `virtualTimeBudget` of page time (scripts, timers and network
    /// loads run; network waits do not use up the budget).
    static func dumpDOM(
        _ url: String, windowSize: (Int, Int) = (1280, 1600), virtualTimeBudget: Duration = .seconds(10)
    ) throws -> Run {
        try run(url, ["--dump-dom", "--window-size=\(windowSize.0),\(windowSize.1)"], virtualTimeBudget)
    }

    /// Loads `url` and writes a PNG of the viewport to `path`.
    static func screenshot(
        _ url: String, to path: String, windowSize: (Int, Int) = (1280, 1200),
        virtualTimeBudget: Duration = .seconds(10)
    ) throws -> Run {
        let run = try run(
            url, ["--screenshot=\(path)", "--window-size=\(windowSize.0),\(windowSize.1)", "--hide-scrollbars"],
            virtualTimeBudget)
        guard FileManager.default.fileExists(atPath: path) else {
            throw Failure(description: "Chromium wrote no screenshot to \(path); its log:\n\(run.log.suffix(2000))")
        }
        return run
    }

    private static func run(_ url: String, _ arguments: [String], _ virtualTimeBudget: Duration) throws -> Run {
        let profile = try TempDirectory(prefix: "thumbd-chromium")
        let milliseconds = virtualTimeBudget.components.seconds * 1000
        let browser = try ChildProcess(
            executable: try executable(),
            arguments: [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile.appending("profile"))",
                "--enable-logging=stderr", "--v=0", "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--metrics-recording-only", "--mute-audio",
                "--virtual-time-budget=\(milliseconds)",
            ] + arguments + [url],
            environment: ["HOME": profile.path])
        guard let termination = browser.wait(timeout: timeout) else {
            browser.kill(SIGKILL)
            _ = browser.wait(timeout: .seconds(5))
            throw Failure(
                description: "Chromium did not finish within \(timeout) loading \(url); killed. Its log:\n"
                    + browser.standardError.suffix(2000))
        }
        let run = Run(output: browser.standardOutput, log: browser.standardError)
        guard termination == .exited(0) else {
            throw Failure(description: "Chromium \(termination) loading \(url); its log:\n\(run.log.suffix(2000))")
        }
        return run
    }

    // MARK: - Artefacts

    /// Where screenshots go: `$THUMBD_TEST_ARTIFACTS`, else `.build/test-artifacts` under the package (found from
    /// this file's path), created if needed.
    static func artifactDirectory() throws -> String {
        let directory: String
        if let override = ProcessInfo.processInfo.environment["THUMBD_TEST_ARTIFACTS"] {
            directory = override
        } else {
            let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            directory = package.appendingPathComponent(".build/test-artifacts").path
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }
}

// MARK: - Reading the dumped DOM

extension String {
    /// The value of `attribute` in the first start tag that contains `marker` (for example `id="summary"`, or
    /// `<body`: a marker may begin with the tag's `<` but hold no other).
    func attribute(_ attribute: String, inTagContaining marker: String) -> String? {
        guard let markerRange = range(of: marker),
            let tagStart = self[..<markerRange.upperBound].range(of: "<", options: .backwards),
            let tagEnd = self[markerRange.upperBound...].firstIndex(of: ">")
        else { return nil }
        let tag = self[tagStart.lowerBound..<tagEnd]
        guard let name = tag.range(of: " \(attribute)=\"") else { return nil }
        let value = tag[name.upperBound...]
        guard let close = value.firstIndex(of: "\"") else { return nil }
        return String(value[..<close])
    }

    /// How many times `text` occurs.
    func occurrences(of text: String) -> Int {
        components(separatedBy: text).count - 1
    }
}
