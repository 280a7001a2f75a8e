// SPDX-License-Identifier: Apache-2.0
import Caching
import EventLoops
import Synchronization
import Thumbnailing

/// The fallback image in force (``FallbackImage``, replaced on reload) and its renders, one per plan.
///
/// A render of the fallback runs on the render threads like any other (interactive lane, the same bounded queue:
/// when it is full the client gets the original error, never a 503 instead of it), and is kept in a small memory
/// LRU of its own (``Limits``), keyed by the plan and the fallback's content hash (its stand-in source, never a
/// real URL). It never enters the thumbnail tiers: not the memory tier, not the disk, not under the failed
/// source's key, so the source's next request asks the origin again. Requests for one plan while its render runs
/// wait for that render (coalesced, like `RenderCoordinator`, on a table under a `Mutex` never held while
/// calling out).
final class FallbackRenders: Sendable {
    /// What the LRU of renders may hold.
    struct Limits: Sendable {
        var maxBytes = 16 << 20
        var maxEntries = 1024
    }

    /// A render of the fallback, and the fallback it came from (its status and `Cache-Control`).
    struct Rendered: Sendable {
        let image: FallbackImage
        let variant: RenderedVariant
    }

    typealias Completion = @Sendable (Result<Rendered, ServiceError>) -> Void

    private struct State: Sendable {
        var image: FallbackImage?
        var flights: [CacheKey: [Completion]] = [:]
    }

    private let state: Mutex<State>
    private let renders: MemoryCache<CacheKey, CacheGroup, RenderedVariant>
    private let renderPool: WorkerPool
    private let thumbnailer: Thumbnailer
    /// Renders run (tests count them).
    private let rendersRun = Atomic<Int>(0)

    /// - Throws: when `limits` are out of range.
    init(
        image: FallbackImage?, renderPool: WorkerPool, thumbnailer: Thumbnailer, limits: Limits = Limits()
    ) throws {
        state = Mutex(State(image: image))
        renders = try MemoryCache(configuration: .init(maxBytes: limits.maxBytes, maxEntries: limits.maxEntries))
        self.renderPool = renderPool
        self.thumbnailer = thumbnailer
    }

    /// The fallback in force; nil when `image.fallback` is empty.
    var image: FallbackImage? { state.withLock { $0.image } }

    /// Renders of the fallback run so far.
    var renderCount: Int { rendersRun.load(ordering: .relaxed) }

    /// Replaces the fallback (a reload): answers from now on use `image` (nil: none), and the renders of the
    /// previous one are dropped. Any thread.
    func update(_ image: FallbackImage?) {
        let changed = state.withLock { state -> Bool in
            guard state.image != image else { return false }
            state.image = image
            return true
        }
        if changed { renders.removeAll() }
    }

    /// The fallback rendered with `spec` (a normalised plan), from the LRU at once on the caller's thread, else from
    /// a render thread. Returns false, and never calls `completion`, when there is no fallback.
    func render(_ spec: ThumbnailSpec, completion: @escaping Completion) -> Bool {
        guard let image = state.withLock({ $0.image }) else { return false }
        let key = VariantKey(source: image.source, spec: spec)
        if let variant = renders.value(forKey: key.cacheKey) {
            completion(.success(Rendered(image: image, variant: variant)))
            return true
        }
        let isFirst = state.withLock { state -> Bool in
            if state.flights[key.cacheKey] != nil {
                state.flights[key.cacheKey, default: []].append(completion)
                return false
            }
            state.flights[key.cacheKey] = [completion]
            return true
        }
        guard isFirst else { return true }
        do {
            _ = try renderPool.submit(priority: .interactive) { [self] in
                rendersRun.add(1, ordering: .relaxed)
                let result: Result<Rendered, ServiceError>
                do throws(ThumbnailError) {
                    let thumbnail = try thumbnailer.render(image.bytes, spec: spec)
                    // No freshness: such a variant is never stored in a tier, nor sent with an ETag.
                    let variant = RenderedVariant(bytes: thumbnail.bytes, format: thumbnail.format, freshness: nil)
                    _ = renders.insert(variant, forKey: key.cacheKey, cost: variant.bytes.count + 200, group: key.group)
                    result = .success(Rendered(image: image, variant: variant))
                } catch {
                    result = .failure(.thumbnail(error))
                }
                finish(key.cacheKey, result)
            }
        } catch {
            finish(key.cacheKey, .failure(.renderQueueFull))
        }
        return true
    }

    /// Answers every request waiting for the render of `key`, outside the lock.
    private func finish(_ key: CacheKey, _ result: Result<Rendered, ServiceError>) {
        let waiters = state.withLock { $0.flights.removeValue(forKey: key) ?? [] }
        for waiter in waiters { waiter(result) }
    }
}
