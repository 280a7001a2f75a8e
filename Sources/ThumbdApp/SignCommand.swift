// SPDX-License-Identifier: Apache-2.0

package import ArgumentParser
import Foundation
import ThumbdSettings
import URLForms

/// `thumbd sign [--config FILE | --key KEY] QUERY`: prints a `/thumb` query with its `sig` appended
/// (README "Signed URLs").
///
/// The key is `--key`, else the first (newest) of `security.signing_keys` loaded exactly as the server loads
/// it: `--config FILE` (else `$THUMBD_CONFIG`), then `THUMBD_SECURITY_SIGNING_KEYS` on top. QUERY may also be
/// a path or URL with a `?`: what precedes the query is printed unchanged. A `sig` already in the query is
/// replaced.
///
/// `--batch FILE` (`-`: standard input) prints instead `sig=<signature>` for a `POST /info` whose body is FILE's exact
/// bytes, signed as a whole (docs/api.md, "POST /info"): `curl --data-binary @FILE "…/info?$(thumbd sign --batch FILE)"`.
///
/// ```
/// $ thumbd sign --config config/thumbd.yaml 'url=https://example.com/a.jpg&w=256'
/// url=https://example.com/a.jpg&w=256&sig=...
/// ```
package struct SignCommand: ParsableCommand {
    /// Name and help text.
    package static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Print a /thumb query with its signature (sig=) appended, or a POST /info body's (--batch).",
        discussion: """
            The key is --key, else the first of security.signing_keys from the configuration (--config FILE, \
            else $THUMBD_CONFIG, then THUMBD_SECURITY_SIGNING_KEYS). Exits 78 when there is no key or the \
            configuration is invalid.
            """
    )

    @Argument(
        help: ArgumentHelp(
            "The query to sign, e.g. 'url=https://example.com/a.jpg&w=256', or a path or URL ending in ?query.",
            valueName: "query"))
    var query: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Print sig= for a POST /info body: this file's exact bytes (- reads standard input).", valueName: "file"))
    var batch: String?

    @OptionGroup var configFile: ConfigFileOption

    @Option(name: .long, help: ArgumentHelp("Sign with this key instead of the configured one.", valueName: "key"))
    var key: String?

    /// Creates an unparsed command (argument parser requirement).
    package init() {}

    /// Exactly one of a query and `--batch`.
    package func validate() throws {
        if (query == nil) == (batch == nil) {
            throw ValidationError("give either a query to sign or --batch FILE, not both")
        }
    }

    /// Prints the signed query (stdout), or the error (stderr) and exits non-zero.
    package func run() throws {
        let result = signedOutput(environment: ProcessInfo.processInfo.environment)
        if result.status == 0 {
            FileHandle.standardOutput.write(Data(result.output.utf8))
        } else {
            FileHandle.standardError.write(Data(result.output.utf8))
            throw ExitCode(result.status)
        }
    }

    /// What `run()` prints and its exit status: the signed query and a newline (0), or one line saying why
    /// not (78, like an invalid configuration).
    /// - Parameter environment: the variables to read `THUMBD_*` from.
    package func signedOutput(environment: [String: String]) -> (output: String, status: Int32) {
        let signingKey: String
        if let key {
            // The rule the server applies to security.signing_keys: a shorter key could never verify there.
            guard key.utf8.count >= 32, key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                return fail("--key must be at least 32 printable characters without spaces")
            }
            signingKey = key
        } else {
            let settings: Settings
            do {
                settings = try ConfigFile(path: configFile.path, environment: environment).load()
            } catch {
                return fail("configuration error: \(error)")
            }
            guard let newest = settings.security.signingKeys.first else {
                return fail(
                    "no signing key: give --key, or set security.signing_keys (--config FILE, $THUMBD_CONFIG, "
                        + "or THUMBD_SECURITY_SIGNING_KEYS)")
            }
            signingKey = newest
        }
        if let batch {
            let body: Data
            do {
                body =
                    batch == "-"
                    ? FileHandle.standardInput.readDataToEndOfFile()
                    : try Data(contentsOf: URL(fileURLWithPath: batch))
            } catch {
                return fail("cannot read \(batch): \(error.localizedDescription)")
            }
            return (
                "\(URLSignature.parameterName)=\(URLSignature.batchSignature(body: [UInt8](body), key: signingKey))\n",
                0
            )
        }
        let (prefix, rawQuery) = Self.split(query ?? "")
        do {
            return (prefix + (try URLSignature.signedQuery(rawQuery, key: signingKey)) + "\n", 0)
        } catch {
            return fail("cannot sign: \(error.publicMessage)")
        }
    }

    /// `(prefix through "?", query)` for a path or URL with a query, else `("", text)`.
    private static func split(_ text: String) -> (prefix: String, query: String) {
        guard let mark = text.firstIndex(of: "?") else { return ("", text) }
        return (String(text[...mark]), String(text[text.index(after: mark)...]))
    }

    private func fail(_ reason: String) -> (output: String, status: Int32) {
        ("thumbd sign: \(reason)\n", ThumbdCommand.configurationErrorStatus)
    }
}
