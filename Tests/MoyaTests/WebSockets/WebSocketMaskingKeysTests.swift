import NIOWebSocket
import Testing

@testable import Moya

/// The masking keys of the frames a conversation sends: fresh for every frame, from the
/// operating system's generator.
@Suite("WebSocket masking keys")
struct WebSocketMaskingKeysTests {
    @Test("Keys from several refills are all different, and use every bit")
    func keysDiffer() {
        var keys = WebSocketMaskingKeys()
        // 1,000 keys: 16 refills of the buffer. Among random 32-bit keys a repeat has a chance of
        // about one in ten thousand; a source that repeated its batch, or served zeros, fails.
        let words = (0..<1_000).map { _ in keys.nextKey().reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
        #expect(Set(words).count >= 999)
        #expect(words.reduce(0, |) == UInt32.max)
    }

    @Test("Two conversations' keys are not the same sequence")
    func independentSources() {
        var first = WebSocketMaskingKeys()
        var second = WebSocketMaskingKeys()
        let a = (0..<8).map { _ in first.next() }
        let b = (0..<8).map { _ in second.next() }
        #expect(a != b)
    }

    @Test("The system's generator fills whole batches of any size")
    func systemRandomFills() {
        for count in [1, 64, 4_096] {
            let values = WebSocketMaskingKeys.systemRandom(count: count)
            #expect(values.count == count)
            #expect(values.contains { $0 != 0 })
        }
    }
}
