import Foundation
import Testing

@testable import Moya

/// Every request allocates a ``TransportExchange`` and frees it when it ends. glibc serves
/// allocations of up to 1,032 bytes from a per-thread cache; a larger one takes the allocator's
/// slow path (its bins, and the consolidation of freed chunks), which cost a plain request
/// about 1 µs when the exchange had grown to 1,440 bytes. What only some requests need (a
/// download's or a stream's sinks, a resume point, a route) is kept out of line for this.
@Suite("Exchange size")
struct ExchangeSizeTests {
    /// glibc's largest allocation served from its per-thread cache (`tcache`), in bytes.
    static let threadCacheLimit = 1032

    #if os(Linux)
    @Test("An exchange is small enough for the allocator's per-thread cache")
    func exchangeFitsTheThreadCache() {
        // A Swift class's metadata (without Objective-C interoperability) holds its instances'
        // size after its kind, its superclass, its flags and its instance address point.
        let metadata = unsafeBitCast(TransportExchange.self as AnyClass, to: UnsafeRawPointer.self)
        let instanceSize = Int(metadata.load(fromByteOffset: 24, as: UInt32.self))
        #expect(instanceSize >= 16 + MemoryLayout<PolicyPermit>.size, "the size is read where it is")
        #expect(instanceSize <= Self.threadCacheLimit, "a TransportExchange is \(instanceSize) bytes")
    }
    #endif

    @Test("What only some requests need is one reference wide")
    func outOfLineParts() {
        #expect(MemoryLayout<TransportRequest.Mode>.size == MemoryLayout<Int>.size)
        #expect(MemoryLayout<TransportExchange.Destination>.size == MemoryLayout<Int>.size)
        #expect(MemoryLayout<ResumePoint?>.size == MemoryLayout<Int>.size)
        #expect(MemoryLayout<TargetRoute>.size == MemoryLayout<Int>.size)
    }
}
