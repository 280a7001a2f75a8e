// SPDX-License-Identifier: Apache-2.0

extension DiskCache {
    /// Applies what readers buffered: last-access updates of hits, and deletion of rows whose blob was
    /// missing or corrupt. One write transaction for everything. Writer only; the app calls it
    /// periodically (e.g. every second) and at shutdown. Returns how many updates were applied.
    @discardableResult
    package func flush() throws(CacheError) -> Int {
        try withWriter { () throws(CacheError) in try flushLocked() }
    }

    /// Evicts least recently used entries down to the low watermark if the cache is over budget
    /// (e.g. after ``setLimits(maxBytes:maxEntryBytes:)`` or at startup). Writer only.
    /// Returns how many entries were evicted.
    @discardableResult
    package func evictIfNeeded() throws(CacheError) -> Int {
        try withWriter { () throws(CacheError) in
            guard shared.currentBytes.load(ordering: .relaxed) > configuration.maxBytes else { return 0 }
            return try evictLocked(toBytes: configuration.lowWatermarkBytes)
        }
    }

    /// Compares up to `maxDirectories` leaf directories (of 4,096) with the index and repairs both sides:
    /// blob files without a row (a crash between rename and insert, or an index rebuilt empty) are
    /// deleted, rows without a blob are deleted. Writer only. The app calls it in the background until
    /// ``ReconcileReport/isComplete``; each call is bounded, so stores interleave.
    package func reconcile(maxDirectories: Int = 64) throws(CacheError) -> ReconcileReport {
        try withWriter { () throws(CacheError) in
            var report = ReconcileReport()
            while report.directoriesScanned < max(1, maxDirectories) && reconcileCursor < BlobLayout.leafCount {
                try reconcileLeaf(reconcileCursor, into: &report)
                reconcileCursor += 1
                report.directoriesScanned += 1
            }
            if reconcileCursor >= BlobLayout.leafCount {
                report.isComplete = true
                reconcileCursor = 0
            }
            return report
        }
    }

    // MARK: - Internals (writer held)

    func flushLocked() throws(CacheError) -> Int {
        let pending = shared.takePending()
        guard !pending.isEmpty else { return 0 }
        let removed = try index.transaction { () throws(CacheError) in
            var removed: [(file: String, size: Int)] = []
            for drop in pending.drops {
                try index.deleteKeyIfFile.bind(1, drop.keyHash)
                try index.deleteKeyIfFile.bind(2, drop.file)
                removed += try index.collectFilesAndSizes(index.deleteKeyIfFile)
            }
            for (keyHash, stamp) in pending.touches {
                defer { index.touch.reset() }
                try index.touch.bind(1, keyHash)
                try index.touch.bind(2, stamp)
                try index.touch.run()
            }
            return removed
        }
        forgetRemoved(removed)
        return pending.touches.count + pending.drops.count
    }

    /// Evicts in `evictionBatchSize` transactions, oldest `last_access` first, until at most `target`
    /// bytes remain. Buffered touches are flushed first so recent hits count. Rows go before blobs:
    /// a crash in between leaves orphan files, never rows without blobs.
    func evictLocked(toBytes target: Int) throws(CacheError) -> Int {
        _ = try flushLocked()
        var evicted = 0
        while shared.currentBytes.load(ordering: .relaxed) > target {
            let excess = shared.currentBytes.load(ordering: .relaxed) - target
            let batch = try index.transaction { () throws(CacheError) in
                var candidates: [(keyHash: Int64, file: String, size: Int)] = []
                do {
                    defer { index.oldest.reset() }
                    try index.oldest.bind(1, Int64(configuration.evictionBatchSize))
                    var freed = 0
                    while freed < excess, try index.oldest.step() {
                        let size = Int(index.oldest.int64(2))
                        candidates.append((index.oldest.int64(0), index.oldest.text(1) ?? "", size))
                        freed += size
                    }
                }
                for candidate in candidates {
                    defer { index.deleteKey.reset() }
                    try index.deleteKey.bind(1, candidate.keyHash)
                    try index.deleteKey.run()
                }
                return candidates
            }
            guard !batch.isEmpty else { break }
            forgetRemoved(batch.map { (file: $0.file, size: $0.size) })
            shared.evictions.add(batch.count, ordering: .relaxed)
            evicted += batch.count
        }
        return evicted
    }

    private func reconcileLeaf(_ leaf: Int, into report: inout ReconcileReport) throws(CacheError) {
        let directory = shared.layout.leafDirectory(leaf)
        let names = Set((try FileIO.listDirectory(directory) ?? []).filter(BlobLayout.isBlobName))
        let range = BlobLayout.keyHashRange(ofLeaf: leaf)
        var rows: [(keyHash: Int64, file: String)] = []
        do {
            defer { index.filesInRange.reset() }
            try index.filesInRange.bind(1, range.lowerBound)
            try index.filesInRange.bind(2, range.upperBound)
            while try index.filesInRange.step() {
                rows.append((index.filesInRange.int64(0), index.filesInRange.text(1) ?? ""))
            }
        }
        let indexed = Set(rows.map(\.file))
        for name in names where !indexed.contains(name) {
            FileIO.removeBestEffort("\(directory)/\(name)")
            report.orphanFilesRemoved += 1
        }
        let missing = rows.filter { !names.contains($0.file) }
        guard !missing.isEmpty else { return }
        let removed = try index.transaction { () throws(CacheError) in
            var removed: [(file: String, size: Int)] = []
            for row in missing {
                try index.deleteKeyIfFile.bind(1, row.keyHash)
                try index.deleteKeyIfFile.bind(2, row.file)
                removed += try index.collectFilesAndSizes(index.deleteKeyIfFile)
            }
            return removed
        }
        forgetRemoved(removed)
        report.missingBlobRowsRemoved += removed.count
    }
}
