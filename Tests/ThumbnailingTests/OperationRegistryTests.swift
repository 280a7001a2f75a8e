// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import Thumbnailing

/// The operation registry's two orders: the key's (step order) and the canonical query's. A descriptor missing from
/// one of them would drop its token from the key (two plans sharing a cache entry) or its field from the query.
@Suite struct OperationRegistryTests {
    static func names(_ list: [any OperationDescriptor.Type]) -> [String] { list.map { String(describing: $0) } }

    @Test func bothOrdersNameEveryDescriptorOnce() {
        let steps = Self.names(OperationRegistry.steps)
        let query = Self.names(OperationRegistry.queryOrder)
        #expect(Set(steps).count == steps.count)
        #expect(Set(query).count == query.count)
        #expect(Set(steps) == Set(query))
    }

    /// Each operation parameter belongs to exactly one descriptor, and the query order of the descriptors is the
    /// order of ``ThumbParameter``'s cases (the canonical query writes fields in that order).
    @Test func descriptorsOwnTheOperationParametersInQueryOrder() {
        let owned = OperationRegistry.queryOrder.flatMap { $0.parameters }
        // (After the steps' come the answer's headers and `fq`, which no step owns.)
        let operationParameters = Array(ThumbParameter.allCases.drop { $0 != .page }.prefix { $0 != .expires })
        #expect(owned == operationParameters)
    }

    /// One check, one message: a plan built in code is refused with the text the `/thumb` parser gives.
    @Test func validationSaysWhatTheParserSays() throws {
        var operations = ThumbnailSpec.Operations()
        operations.pixelate = 300
        #expect(throws: SpecError(field: "pixelate", reason: "must be an integer 0...256")) {
            try operations.validate()
        }
        operations = ThumbnailSpec.Operations()
        operations.brightness = -300
        #expect(throws: SpecError(field: "brightness", reason: "must be an integer -255...255")) {
            try ThumbnailSpec(width: 10, height: 10, operations: operations)
        }
        operations = ThumbnailSpec.Operations()
        operations.padding = .init(top: 0, right: 2000, bottom: 0, left: 0)
        #expect(throws: SpecError(field: "padding", reason: "each side × dpr must be at most 1024")) {
            try operations.validate()
        }
    }
}
