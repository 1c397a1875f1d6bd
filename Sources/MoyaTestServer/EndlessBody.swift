import NIOCore

/// The state of an `/endless` response: an unbounded body of pattern bytes (`i % 251`), one
/// chunk in flight at a time.
///
/// The handler that writes it lives on one event loop, so this is plain mutable state.
struct EndlessBody {
    /// The bytes of each write.
    let chunkSize: Int
    /// `chunkSize + 251` pattern bytes; chunks are zero-copy slices of it.
    let pattern: ByteBuffer
    /// The index in the endless body of the next chunk's first byte, modulo 251.
    var offset = 0
    /// A chunk was handed to the channel and its write has not completed yet.
    var writeInFlight = false

    /// Creates the body, with chunks of `chunkSize` bytes.
    init(chunkSize: Int, allocator: ByteBufferAllocator) {
        self.chunkSize = chunkSize
        self.pattern = TestServerHandler.patternBuffer(length: chunkSize + 251, allocator: allocator)
    }

    /// Takes the next chunk and marks it in flight.
    mutating func takeNextChunk() -> ByteBuffer {
        let chunk = self.pattern.getSlice(at: self.pattern.readerIndex + self.offset, length: self.chunkSize)!
        self.offset = (self.offset + self.chunkSize) % 251
        self.writeInFlight = true
        return chunk
    }
}
