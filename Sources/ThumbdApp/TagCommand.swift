// SPDX-License-Identifier: Apache-2.0

package import ArgumentParser
import Foundation
import OriginFetch

/// `thumbd tag URL...`: prints each source's tag (``SourceTag``) and its canonical URL, one line each: what
/// `cache.tag_header` sends with its thumbnails and `POST /purge` takes in `tags` (docs/api.md, "POST /purge").
///
/// ```
/// $ thumbd tag 'HTTPS://Images.example.com/a.jpg#top'
/// s6f1d2c0a9b8e7f34 https://images.example.com/a.jpg
/// ```
package struct TagCommand: ParsableCommand {
    /// Name and help text.
    package static let configuration = CommandConfiguration(
        commandName: "tag",
        abstract: "Print the source tag of each URL (cache.tag_header, POST /purge's tags) and its canonical form.",
        discussion: "Exits 64 when a URL is not an absolute http(s) URL."
    )

    @Argument(help: ArgumentHelp("Source URLs, as clients put them in thumbnail URLs.", valueName: "url"))
    var urls: [String] = []

    /// Creates an unparsed command (argument parser requirement).
    package init() {}

    /// At least one URL.
    package func validate() throws {
        if urls.isEmpty { throw ValidationError("give at least one source URL") }
    }

    /// Prints the tags, or the first URL that is not one.
    package func run() throws {
        let result = taggedOutput()
        if result.status == 0 {
            FileHandle.standardOutput.write(Data(result.output.utf8))
        } else {
            FileHandle.standardError.write(Data(result.output.utf8))
            throw ExitCode(result.status)
        }
    }

    /// What `run()` prints and its exit status: `<tag> <canonical URL>` per URL (0), or one line naming the URL
    /// that is not an absolute http(s) URL (64, `EX_USAGE`).
    package func taggedOutput() -> (output: String, status: Int32) {
        var output = ""
        for raw in urls {
            guard let source = try? SourceURL(raw) else {
                return ("thumbd tag: \(raw) is not an absolute http(s) URL\n", 64)
            }
            output += SourceTag.of(source) + " " + source.string + "\n"
        }
        return (output, 0)
    }
}
