// SPDX-License-Identifier: Apache-2.0
package import Foundation

/// The image fixtures in `Resources/` (how each was made: `Resources/README.md`), and the colours drawn in
/// them, so that tests can check pixels.
package enum Fixtures {
    /// The URL of a fixture file, e.g. `Fixtures.url("orientation-6.jpg")`. Traps if it does not exist: a
    /// missing fixture is a broken checkout, not a test outcome.
    package static func url(_ name: String) -> URL {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Resources") else {
            preconditionFailure("fixture \(name) is missing from ThumbdTestSupport/Resources")
        }
        return url
    }

    /// The bytes of a fixture file.
    package static func bytes(_ name: String) -> [UInt8] {
        do {
            return [UInt8](try Data(contentsOf: url(name)))
        } catch {
            preconditionFailure("fixture \(name) is unreadable: \(error)")
        }
    }

    /// The JPEG whose EXIF orientation tag is `orientation` (1...8); every one displays as `quadrants.png`.
    package static func orientation(_ orientation: Int) -> [UInt8] {
        bytes("orientation-\(orientation).jpg")
    }

    // MARK: - The quadrant picture (64x48 upright): quadrants.*, orientation-N.jpg, cmyk.jpg, rgb16.png, ...

    /// Top-left quadrant.
    package static let red = RGB(230, 30, 30)
    /// Top-right quadrant.
    package static let green = RGB(30, 200, 60)
    /// Bottom-left quadrant.
    package static let blue = RGB(40, 60, 220)
    /// Bottom-right quadrant.
    package static let yellow = RGB(240, 220, 40)

    /// The quadrant colours as they are expected at the four quadrant centres of an upright rendering
    /// of size `width` x `height`: top-left, top-right, bottom-left, bottom-right.
    package static func quadrantProbes(width: Int, height: Int) -> [(x: Int, y: Int, colour: RGB)] {
        [
            (width / 4, height / 4, red), (width * 3 / 4, height / 4, green),
            (width / 4, height * 3 / 4, blue), (width * 3 / 4, height * 3 / 4, yellow),
        ]
    }

    /// The quadrant colours of `cmyk.jpg` (top-left, top-right, bottom-left, bottom-right), muted so that
    /// they survive the trip through CMYK.
    package static let cmykQuadrants = [RGB(200, 80, 70), RGB(90, 160, 90), RGB(70, 100, 170), RGB(220, 200, 90)]

    // MARK: - grid.png: 300x300, 3x3 cells of 100 px

    /// The cell colours of `grid.png`, row by row from the top.
    package static let grid: [[RGB]] = [
        [RGB(255, 0, 0), RGB(0, 255, 0), RGB(0, 0, 255)],
        [RGB(255, 255, 0), RGB(0, 255, 255), RGB(255, 0, 255)],
        [RGB(255, 255, 255), RGB(0, 0, 0), RGB(128, 128, 128)],
    ]

    // MARK: - Other pictures

    /// `grey.png` and `grey-alpha.png`: the left half.
    package static let greyDark: UInt8 = 40
    /// `grey.png` and `grey-alpha.png`: the right half.
    package static let greyLight: UInt8 = 200
    /// Frames of `animated.gif` / `animated.webp`, in order.
    package static let animationFrames = [red, green, blue]
    /// `interest.png`: the flat background; the busy red/yellow patch is in the left third, rows 100...199.
    package static let interestBackground = RGB(128, 128, 128)
}
