// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// `bg=auto` and `bg=blur` (thumbor's `fill(auto)` and `fill(blur)`) on quadrants.png: 64x48, red, green, blue and
/// yellow quarters.
@Suite struct BackgroundFillTests {
    static func render(_ fill: ThumbnailSpec.BackgroundFill, width: Int, height: Int, fixture: String = "quadrants.png")
        throws -> DecodedImage
    {
        var operations = ThumbnailSpec.Operations()
        operations.backgroundFill = fill
        let spec = try ThumbnailSpec(
            width: width, height: height, fit: .pad, format: .exactly(.png), operations: operations)
        return try DecodedImage(decoding: TestThumbnailer.make().render(Fixtures.bytes(fixture), spec: spec).bytes)
    }

    @Test func autoPadsWithThePicturesMeanColour() throws {
        // When the 64x48 picture is padded to 64x64 with bg=auto
        let image = try Self.render(.auto, width: 64, height: 64)

        // Then the 8 px bands above and below are the mean of the four quarters, each band truncated as thumbor's
        // _fill does: ((230+30+40+240)/4, (30+200+60+220)/4, (30+60+220+40)/4) = (135, 127.5, 87.5) → (135, 127, 87)
        #expect(image.width == 64 && image.height == 64)
        let mean = RGB(135, 127, 87)
        for (x, y) in [(0, 0), (63, 7), (30, 60), (0, 63)] {
            #expect(image.colour(x: x, y: y) == mean, "(\(x), \(y)): \(image.colour(x: x, y: y))")
            #expect(image.alpha(x: x, y: y) == 255 || !image.hasAlpha)
        }
        // And the picture itself is unchanged between them
        let probes = [
            (x: 16, y: 20, colour: Fixtures.red), (x: 48, y: 20, colour: Fixtures.green),
            (x: 16, y: 44, colour: Fixtures.blue), (x: 48, y: 44, colour: Fixtures.yellow),
        ]
        #expect(image.mismatch(in: probes, tolerance: 4) == nil)
    }

    @Test func autoIsTheMeanOfTheResizedPicture() throws {
        // When the picture is shrunk to 32x24 inside 40x40: the mean is taken after the resize
        let image = try Self.render(.auto, width: 40, height: 40)
        #expect(image.width == 40 && image.height == 40)
        var sums = [0, 0, 0]
        for y in 8..<32 {
            for x in 4..<36 {
                let c = image.colour(x: x, y: y)
                sums[0] += Int(c.red)
                sums[1] += Int(c.green)
                sums[2] += Int(c.blue)
            }
        }
        // Then the pad is the truncated mean of exactly those 32x24 pixels
        let mean = RGB(UInt8(sums[0] / 768), UInt8(sums[1] / 768), UInt8(sums[2] / 768))
        #expect(image.colour(x: 0, y: 0) == mean && image.colour(x: 39, y: 39) == mean, "\(image.colour(x: 0, y: 0))")
    }

    @Test func blurPadsWithTheBlurredPictureStretchedToTheBox() throws {
        // When the 64x48 picture is padded to 64x80 with bg=blur
        let image = try Self.render(.blur, width: 64, height: 80)
        #expect(image.width == 64 && image.height == 80)

        // Then the picture sits in the middle unchanged
        let probes = [
            (x: 16, y: 28, colour: Fixtures.red), (x: 48, y: 28, colour: Fixtures.green),
            (x: 16, y: 52, colour: Fixtures.blue), (x: 48, y: 52, colour: Fixtures.yellow),
        ]
        #expect(image.mismatch(in: probes, tolerance: 4) == nil)
        // And the bands above and below are the picture blurred: opaque, mixed, yet redder on the top left than the
        // top right, bluer on the bottom left than the bottom right
        let topLeft = image.colour(x: 0, y: 0), topRight = image.colour(x: 63, y: 0)
        let bottomLeft = image.colour(x: 0, y: 79), bottomRight = image.colour(x: 63, y: 79)
        #expect(image.alpha(x: 0, y: 0) == 255 || !image.hasAlpha)
        #expect(topLeft.red > topRight.red + 20 && topLeft.green + 20 < topRight.green, "\(topLeft) \(topRight)")
        #expect(bottomLeft.blue > bottomRight.blue + 20, "\(bottomLeft) \(bottomRight)")
        #expect(topLeft.distance(to: Fixtures.red) > 40, "blurred, not the picture's corner: \(topLeft)")
        // And the top band is the top of the picture blurred, the bottom band the bottom of it
        #expect(topLeft.blue < bottomLeft.blue, "\(topLeft) \(bottomLeft)")
    }

    @Test func blurWithoutAPadChangesNothing() throws {
        // When the box is the picture's own size, there is no area to fill
        let plain = try DecodedImage(
            decoding: TestThumbnailer.make().render(
                Fixtures.bytes("quadrants.png"), spec: ThumbnailSpec(width: 64, height: 48, format: .exactly(.png))
            ).bytes)
        let image = try Self.render(.blur, width: 64, height: 48)
        #expect(image.width == plain.width && image.height == plain.height)
        #expect(image.colour(x: 0, y: 0) == plain.colour(x: 0, y: 0))
        #expect(image.colour(x: 63, y: 47) == plain.colour(x: 63, y: 47))
    }
}
