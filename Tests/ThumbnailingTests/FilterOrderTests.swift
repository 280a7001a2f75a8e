// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// `order`: the pixel filters run in the plan's order (thumbor's URL order), proved by pixels on quadrants.png's red
/// quadrant (230, 30, 30: `Fixtures.red`), where the orders give different colours.
@Suite struct FilterOrderTests {
    typealias Operations = ThumbnailSpec.Operations

    static func redQuadrant(_ configure: (inout Operations) -> Void) throws -> RGB {
        let spec = try PipelineTests.plan(64, 48, configure)
        let (_, image) = try TestThumbnailer.render("quadrants.png", spec)
        return image.colour(x: 16, y: 12)
    }

    @Test func brightnessBeforeContrastClampsFirst() throws {
        // Given brightness +50 and contrast 0.5 on red (230, 30, 30)
        func tone(_ operations: inout Operations) {
            operations.brightness = 50
            operations.contrast = PipelineTests.decimal("0.5")
        }
        // When the table's order runs them (contrast, then brightness): 0.5 × (v − 128) + 128 + 50, red 229, green 129
        let table = try Self.redQuadrant(tone)
        // and when brightness runs first, clamped, then contrast: green 0.5 × (30 + 50 − 128) + 128 = 104, red
        // 0.5 × (255 − 128) + 128 ≈ 191 (230 + 50 clamps to 255 first)
        let ordered = try Self.redQuadrant {
            tone(&$0)
            $0.filterOrder = [.brightness, .contrast]
        }
        // Then the pixels follow each order
        #expect(abs(Int(table.green) - 129) <= 1 && abs(Int(table.red) - 229) <= 1, "\(table)")
        #expect(abs(Int(ordered.green) - 104) <= 1 && abs(Int(ordered.red) - 191) <= 1, "\(ordered)")
    }

    @Test func rgbBeforeGreyscaleEndsGrey() throws {
        // Given green shifted up 100 and grey, on red (230, 30, 30)
        func filters(_ operations: inout Operations) {
            operations.channelShift = ThumbnailSpec.ChannelShift(red: 0, green: 100, blue: 0)
            operations.greyscale = .luminance
        }
        // When the table runs grey first, the shift colours the grey picture: green above red
        let table = try Self.redQuadrant(filters)
        // and when the shift runs first, the grey step makes the shifted red grey
        let ordered = try Self.redQuadrant {
            filters(&$0)
            $0.filterOrder = [.rgb, .grayscale]
        }
        #expect(Int(table.green) - Int(table.red) >= 90)
        #expect(ordered.red == ordered.green && ordered.green == ordered.blue)
    }

    @Test func theTablesOrderIsNoOrder() throws {
        // Given an order that is the table's, and one that names a filter that does nothing
        var operations = Operations()
        operations.brightness = 10
        operations.contrast = PipelineTests.decimal("2")
        operations.filterOrder = [.contrast, .brightness]
        var neutral = operations
        neutral.filterOrder = [.noise, .brightness, .contrast]
        // Then both normalise to no order (one key with the plan without one)
        #expect(operations.normalized.filterOrder.isEmpty)
        #expect(neutral.normalized.filterOrder == [.brightness, .contrast])
    }
}
