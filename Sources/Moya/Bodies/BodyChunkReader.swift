import Foundation

/// Reads the sequence of a ``RequestBodyStream`` one chunk at a time, for one upload.
///
/// Not `Sendable`: the task that uploads the body makes it and asks it for every chunk.
final class BodyChunkReader {
    /// Asks the iterator for its next chunk and hands its bytes to the closure it is given.
    private let pull: ((UnsafeRawBufferPointer) -> Void) async throws -> Bool

    init<Chunks: AsyncSequence>(_ chunks: Chunks) where Chunks.Element: DataProtocol {
        var iterator = chunks.makeAsyncIterator()
        pull = { consume in
            guard let chunk = try await iterator.next() else { return false }
            for region in chunk.regions {
                region.withUnsafeBytes { consume($0) }
            }
            return true
        }
    }

    /// Waits for the sequence's next chunk and hands its bytes to `consume`, in one or more
    /// pieces, before returning.
    ///
    /// - Returns: `false` at the end of the sequence (`consume` was not called).
    /// - Throws: What the sequence throws.
    func next(_ consume: (UnsafeRawBufferPointer) -> Void) async throws -> Bool {
        try await pull(consume)
    }
}
