// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// A filter of the pixel room that a plan may run in its own order, by its `/thumb` parameter's name. The cases'
    /// order is the pipeline table's (pipeline.c), which a plan without `order` runs.
    package enum PixelFilter: String, CaseIterable, Hashable, Sendable {
        case saturation, contrast, brightness, grayscale, blur, sharpen, pixelate, rgb, colorize, curve, equalize
        case convolution, noise

        /// Whether `operations` runs it.
        func isOn(in operations: Operations) -> Bool {
            switch self {
            case .saturation: operations.saturation != .one
            case .contrast: operations.contrast != .one
            case .brightness: operations.brightness != 0
            case .grayscale: operations.greyscale != .off
            case .blur: operations.blur != .zero
            case .sharpen: operations.sharpen != .zero
            case .pixelate: operations.pixelate != 0
            case .rgb: operations.channelShift != .zero
            case .colorize: operations.colorize != nil
            case .curve: operations.curve != nil
            case .equalize: operations.equalize
            case .convolution: operations.convolution != nil
            case .noise: operations.noise != nil
            }
        }

        /// Whether `values` sets it (to anything: a neutral value is dropped by the normalisation).
        func isGiven(in values: PlanValues) -> Bool {
            switch self {
            case .saturation: values.saturation != nil
            case .contrast: values.contrast != nil
            case .brightness: values.brightness != nil
            case .grayscale: values.greyscale != nil
            case .blur: values.blur != nil
            case .sharpen: values.sharpen != nil
            case .pixelate: values.pixelate != nil
            case .rgb: values.channelShift != nil
            case .colorize: values.colorize != nil
            case .curve: values.curve != nil
            case .equalize: values.equalize != nil
            case .convolution: values.convolution != nil
            case .noise: values.noise != nil
            }
        }

        /// The shim's id of its step.
        var vipsFilter: ThumbdVipsFilter {
            switch self {
            case .saturation: THUMBD_VIPS_FILTER_SATURATION
            case .contrast: THUMBD_VIPS_FILTER_CONTRAST
            case .brightness: THUMBD_VIPS_FILTER_BRIGHTNESS
            case .grayscale: THUMBD_VIPS_FILTER_GREYSCALE
            case .blur: THUMBD_VIPS_FILTER_BLUR
            case .sharpen: THUMBD_VIPS_FILTER_SHARPEN
            case .pixelate: THUMBD_VIPS_FILTER_PIXELATE
            case .rgb: THUMBD_VIPS_FILTER_RGB
            case .colorize: THUMBD_VIPS_FILTER_COLORIZE
            case .curve: THUMBD_VIPS_FILTER_CURVE
            case .equalize: THUMBD_VIPS_FILTER_EQUALIZE
            case .convolution: THUMBD_VIPS_FILTER_CONVOLUTION
            case .noise: THUMBD_VIPS_FILTER_NOISE
            }
        }
    }
}

/// `order=<filter>,<filter>,…`: the pixel filters the plan gives, run in this order (thumbor runs its filters in the
/// order its URL writes them; its form sets `order` from it). Filters given but not listed run after the listed
/// ones, in the table's order; a name whose filter the plan does not give is a 400. The canonical value is every
/// filter that does something, in the order they run, and nothing when that is the table's order, so a plan whose
/// order changes nothing has the key it had without `order`. Key ` order=a,b,…` after the filters.
enum FilterOrderOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.order]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        var order: [ThumbnailSpec.PixelFilter] = []
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let filter = ThumbnailSpec.PixelFilter(rawValue: String(name)) else {
                throw SpecError(
                    field: "order",
                    reason: "must list filters among "
                        + ThumbnailSpec.PixelFilter.allCases.map(\.rawValue).joined(separator: ", "))
            }
            guard !order.contains(filter) else {
                throw SpecError(field: "order", reason: "names \(filter.rawValue) twice")
            }
            order.append(filter)
        }
        values.filterOrder = order
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        guard let order = values.filterOrder else { return }
        if let missing = order.first(where: { !$0.isGiven(in: values) }) {
            throw SpecError(field: "order", reason: "names \(missing.rawValue), which the plan does not give")
        }
        operations.filterOrder = order
        normalize(&operations)
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        guard Set(operations.filterOrder).count == operations.filterOrder.count else {
            throw SpecError(field: "order", reason: "names a filter twice")
        }
    }

    /// The filters that do something in the order they run; nothing when that is the table's order.
    static func normalize(_ operations: inout ThumbnailSpec.Operations) {
        guard !operations.filterOrder.isEmpty else { return }
        let on = ThumbnailSpec.PixelFilter.allCases.filter { $0.isOn(in: operations) }
        let listed = operations.filterOrder.filter { $0.isOn(in: operations) }
        let running = listed + on.filter { !listed.contains($0) }
        operations.filterOrder = running == on ? [] : running
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        guard !operations.filterOrder.isEmpty else { return }
        text += " order=" + operations.filterOrder.map(\.rawValue).joined(separator: ",")
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        guard !operations.filterOrder.isEmpty else { return }
        fields.append(CanonicalField(.order, operations.filterOrder.map(\.rawValue).joined(separator: ",")))
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        let order = operations.filterOrder
        withUnsafeMutableBytes(of: &params.filter_order) { bytes in
            for (index, filter) in order.prefix(bytes.count).enumerated() {
                bytes[index] = UInt8(filter.vipsFilter.rawValue)
            }
        }
        params.filter_order_count = Int32(min(order.count, MemoryLayout.size(ofValue: params.filter_order)))
    }
}
